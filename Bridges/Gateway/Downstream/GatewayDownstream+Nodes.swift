import GatewayWire
import RelayCore
import RelayTransport

/// What a node answered to an invoke.
enum InvokeOutcome {
    case success(payload: JSONValue, payloadJSON: String?)
    case failure(GatewayError)
}

/// A `node.invoke` waiting for the node's result; `reply` answers whoever asked (an operator here,
/// or an upstream gateway through node passthrough).
struct PendingInvoke {
    var nodeID: String
    var command: String
    var timer: TimerID?
    var reply: (InvokeOutcome) -> Void
}

extension GatewayDownstream {
    /// The longest a `node.invoke` may wait for its node (a client's `timeoutMs` is clamped to it).
    static let maxInvokeTimeoutMillis = 600_000

    func handleNodeRequest(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        switch request.method {
        case "node.list":
            let list = nodes.values.compactMap(\.peer).sorted { $0.connectedAt < $1.connectedAt }.map(\.nodeEntry)
            socket.reply(request.id, NodeList(ts: clock.nowMillis(), nodes: list))
        case "node.describe":
            guard let nodeID = request.params(as: NodeParams.self)?.nodeId, let node = nodes[nodeID]?.peer else {
                return socket.fail(request.id, .nodeNotConnected)
            }
            socket.reply(request.id, node.nodeEntry)
        default:
            invoke(request, from: socket)
        }
    }

    private func invoke(_ request: GatewayRequest<JSONValue>, from socket: GatewaySocket) {
        let params = request.params(as: NodeInvokeParams.self)
        guard let nodeID = params?.nodeId, let command = params?.command else { return socket.fail(request.id, .nodeAndCommandRequired) }
        invokeLocal(
            nodeID: nodeID,
            command: command,
            paramsJSON: (params?.params ?? .null).encoded(),
            timeoutMillis: Int(params?.timeoutMs ?? Int64(settings.invokeTimeoutMillis)),
            idempotencyKey: params?.idempotencyKey
        ) { [weak socket] outcome in
            guard let socket else { return }
            switch outcome {
            case .success(let payload, let payloadJSON):
                socket.reply(request.id, NodeInvokeResponse(nodeId: nodeID, command: command, payload: payload, payloadJSON: payloadJSON))
            case .failure(let error):
                socket.fail(request.id, error)
            }
        }
    }

    /// Commands an iOS or Android node can only run in the foreground.
    static func needsForeground(_ command: String) -> Bool {
        ["camera.", "canvas.", "screen."].contains { command.hasPrefix($0) }
    }

    /// Sends `node.invoke.request` to a connected node and calls `reply` once with its answer,
    /// a timeout, or NOT_CONNECTED. A backgrounded node is refused foreground-only commands
    /// (NODE_BACKGROUND_UNAVAILABLE), or they wait for it when `queue_until_foreground` is on.
    func invokeLocal(
        nodeID: String,
        command: String,
        paramsJSON: String,
        timeoutMillis requested: Int,
        idempotencyKey: String?,
        reply: @escaping (InvokeOutcome) -> Void
    ) {
        // Whatever a client asks, an invoke waits between 1 ms and `maxInvokeTimeoutMillis`.
        let timeoutMillis = min(max(requested, 1), Self.maxInvokeTimeoutMillis)
        guard let node = nodes[nodeID], let peer = node.peer else { return reply(.failure(.nodeNotConnected)) }
        guard peer.commands.isEmpty || peer.commands.contains(command) else { return reply(.failure(.undeclaredCommand(command))) }
        if peer.isBackground, Self.needsForeground(command) {
            guard settings.queueUntilForeground else { return reply(.failure(.nodeInBackground)) }
            node.heldInvokes.append { [weak self] in
                self?.invokeLocal(
                    nodeID: nodeID,
                    command: command,
                    paramsJSON: paramsJSON,
                    timeoutMillis: timeoutMillis,
                    idempotencyKey: idempotencyKey,
                    reply: reply
                )
            }
            return
        }
        let invokeID = Identifiers.newUUID()
        let timer = loop.schedule(afterMillis: timeoutMillis) { [weak self] in
            guard let self, let waiting = invokes.removeValue(forKey: invokeID) else { return }
            waiting.reply(.failure(.invokeTimedOut))
        }
        invokes[invokeID] = PendingInvoke(nodeID: nodeID, command: command, timer: timer, reply: reply)
        let payload = NodeInvokeRequest(
            id: invokeID,
            nodeId: nodeID,
            command: command,
            paramsJSON: paramsJSON,
            timeoutMs: Int64(timeoutMillis),
            idempotencyKey: idempotencyKey ?? invokeID
        )
        // Sent to one connection: no seq (only broadcasts count in a socket's sequence).
        deliver(GatewayJSON.encode(GatewayEvent("node.invoke.request", payload)), to: node)
    }

    func handleInvokeResult(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let result = request.params(as: NodeInvokeResult.self)
        guard let invokeID = result?.id, let waiting = invokes[invokeID], waiting.nodeID == socket.deviceID else {
            // A result after the timeout (or for an unknown id) is acknowledged and dropped.
            return socket.reply(request.id, NodeResultAck(ignored: true))
        }
        invokes.removeValue(forKey: invokeID)
        waiting.timer.map(loop.cancel)
        socket.reply(request.id, NodeResultAck(ignored: false))
        if result?.ok == true {
            let payloadText = result?.payloadJSON
            let payload = payloadText.flatMap { JSONValue.parse($0) } ?? result?.payload ?? .null
            waiting.reply(.success(payload: payload, payloadJSON: payloadText))
        } else {
            let nodeError = result?.error ?? NodeError(code: "UNKNOWN").json
            if nodeError["code"]?.stringValue == "NODE_BACKGROUND_UNAVAILABLE" {
                socket.machine.peer?.isBackground = true
                hub.presence.signal(.backgrounded, deviceID: socket.deviceID)
            }
            waiting.reply(.failure(.nodeReported(nodeError)))
        }
    }

    /// The node went away: everything it owed fails with NOT_CONNECTED.
    func failInvokes(toNode nodeID: String) {
        for (id, waiting) in invokes where waiting.nodeID == nodeID {
            invokes.removeValue(forKey: id)
            waiting.timer.map(loop.cancel)
            waiting.reply(.failure(.nodeNotConnected))
        }
    }
}
