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

    func handleNodeRequest(_ request: GatewayRequest, on session: GatewaySession) {
        switch request.method {
        case "node.list":
            guard session.has("operator.read") || session.has("operator.write") else {
                return session.fail(request.id, .invalid("missing scope operator.read"), close: nil)
            }
            let list = nodes.values.sorted { $0.connectedAt < $1.connectedAt }.map { $0.nodeJSON() }
            session.send(GatewayFrame.ok(request.id, .object(["ts": .int(clock.nowMillis()), "nodes": .array(list)])))
        case "node.describe":
            guard let nodeID = request.string("nodeId"), let node = nodes[nodeID] else {
                return session.fail(request.id, notConnected(), close: nil)
            }
            session.send(GatewayFrame.ok(request.id, node.nodeJSON()))
        default:
            invoke(request, from: session)
        }
    }

    private func notConnected() -> GatewayError {
        GatewayError(code: .unavailable, message: "node not connected", details: ["code": .string("NOT_CONNECTED")])
    }

    private func invoke(_ request: GatewayRequest, from session: GatewaySession) {
        guard session.has("operator.write") else { return session.fail(request.id, .invalid("missing scope operator.write"), close: nil) }
        guard let nodeID = request.string("nodeId"), let command = request.string("command") else {
            return session.fail(request.id, .invalid("nodeId and command are required"), close: nil)
        }
        let timeout = Int(request.params["timeoutMs"]?.intValue ?? Int64(settings.invokeTimeoutMillis))
        invokeLocal(
            nodeID: nodeID,
            command: command,
            paramsJSON: (request.params["params"] ?? .null).encoded(),
            timeoutMillis: timeout,
            idempotencyKey: request.string("idempotencyKey")
        ) { [weak session] outcome in
            guard let session else { return }
            switch outcome {
            case .success(let payload, let payloadJSON):
                session.send(
                    GatewayFrame.ok(
                        request.id,
                        .object([
                            "ok": .bool(true), "nodeId": .string(nodeID), "command": .string(command), "payload": payload,
                            "payloadJSON": payloadJSON.map(JSONValue.string) ?? .null,
                        ])
                    )
                )
            case .failure(let error):
                session.fail(request.id, error, close: nil)
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
        guard let node = nodes[nodeID] else { return reply(.failure(notConnected())) }
        guard node.commands.isEmpty || node.commands.contains(command) else {
            return reply(.failure(.invalid("the node does not declare \(command.prefix(64))")))
        }
        if node.isBackground, Self.needsForeground(command) {
            guard settings.queueUntilForeground else {
                let nodeError: JSONValue = .object([
                    "code": .string("NODE_BACKGROUND_UNAVAILABLE"), "message": .string("command requires foreground"),
                ])
                return reply(.failure(GatewayError(code: .unavailable, message: "node is in the background", details: ["nodeError": nodeError])))
            }
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
            waiting.reply(
                .failure(
                    GatewayError(code: .unavailable, message: "node invoke timed out", details: ["nodeError": .object(["code": .string("TIMEOUT")])])
                )
            )
        }
        invokes[invokeID] = PendingInvoke(nodeID: nodeID, command: command, timer: timer, reply: reply)
        let payload: JSONValue = .object([
            "id": .string(invokeID), "nodeId": .string(nodeID), "command": .string(command), "paramsJSON": .string(paramsJSON),
            "timeoutMs": .int(Int64(timeoutMillis)), "idempotencyKey": .string(idempotencyKey ?? invokeID),
        ])
        // Sent to one connection: no seq (only broadcasts count in a socket's sequence).
        deliver(GatewayFrame.event("node.invoke.request", payload), to: node)
    }

    func handleInvokeResult(_ request: GatewayRequest, on session: GatewaySession) {
        guard session.isNode else { return session.fail(request.id, .invalid("only nodes report invoke results"), close: nil) }
        guard let invokeID = request.string("id"), let waiting = invokes[invokeID], waiting.nodeID == session.deviceID else {
            // A result after the timeout (or for an unknown id) is acknowledged and dropped.
            return session.send(GatewayFrame.ok(request.id, .object(["ok": .bool(true), "ignored": .bool(true)])))
        }
        invokes.removeValue(forKey: invokeID)
        waiting.timer.map(loop.cancel)
        session.send(GatewayFrame.ok(request.id, .object(["ok": .bool(true)])))
        if request.params["ok"]?.boolValue == true {
            let payloadText = request.string("payloadJSON")
            let payload = payloadText.flatMap { JSONValue.parse($0) } ?? request.params["payload"] ?? .null
            waiting.reply(.success(payload: payload, payloadJSON: payloadText))
        } else {
            let nodeError = request.params["error"] ?? .object(["code": .string("UNKNOWN")])
            if nodeError["code"]?.stringValue == "NODE_BACKGROUND_UNAVAILABLE" {
                session.isBackground = true
                hub.presence.signal(.backgrounded, deviceID: session.deviceID)
            }
            waiting.reply(.failure(GatewayError(code: .unavailable, message: "node reported an error", details: ["nodeError": nodeError])))
        }
    }

    /// `node.event` from a node: `app.state {state: "background"|"foreground"}` moves its presence;
    /// `node.presence.alive` (a woken app saying it is there) is recorded as the device last seen.
    func handleNodeEvent(_ request: GatewayRequest, on session: GatewaySession) {
        guard session.isNode else { return session.fail(request.id, .invalid("only nodes send node.event"), close: nil) }
        let event = request.string("event") ?? ""
        let payload = request.string("payloadJSON").flatMap { JSONValue.parse($0) } ?? request.params["payload"] ?? .null
        func answer(handled: Bool, reason: String?) {
            var result: [String: JSONValue] = ["ok": .bool(true), "event": .string(event), "handled": .bool(handled)]
            if let reason { result["reason"] = .string(reason) }
            session.send(GatewayFrame.ok(request.id, .object(result)))
        }
        if event == "node.presence.alive" {
            guard payload.objectValue != nil else { return answer(handled: false, reason: "invalid_payload") }
            let now = clock.nowMillis()
            return hub.devices.update(DeviceSnapshot.Request(deviceID: session.deviceID)) {
                $0.device?.lastSeenAt = now
            } completion: { result in
                if case .success = result {
                    answer(handled: true, reason: "persisted")
                } else {
                    answer(handled: false, reason: "store_unavailable")
                }
            }
        }
        if event == "push.apns.register" { return registerAPNs(payload, on: session, answer: answer) }
        answer(handled: event == "app.state", reason: nil)
        guard event == "app.state" else { return }
        let background = payload["state"]?.stringValue == "background"
        session.isBackground = background
        hub.presence.signal(background ? .backgrounded : .foregrounded, deviceID: session.deviceID)
        if !background {
            let held = session.heldInvokes
            session.heldInvokes = []
            for invoke in held { invoke() }
        }
    }

    /// `push.apns.register {token, topic, environment, transport?}`: the node's APNs token becomes
    /// its push target (OpenClaw's direct transport; the relay-backed one has no token to keep).
    private func registerAPNs(_ payload: JSONValue, on session: GatewaySession, answer: @escaping (Bool, String?) -> Void) {
        let transport = payload["transport"]?.stringValue?.lowercased() ?? "direct"
        guard transport == "direct" else { return answer(false, "unsupported_transport") }
        guard let token = payload["token"]?.stringValue, PushTarget.isAPNsToken(token) else {
            logger.info("push target rejected: not an APNs token in hex", metadata: ["protocol": "gateway", "device": "\(session.deviceID)"])
            return answer(false, "invalid_payload")
        }
        let platform = payload["environment"]?.stringValue.map { String($0.prefix(32)) }
        let deviceID = session.deviceID
        hub.pushes.register(deviceID: deviceID, kind: .apns, token: token.lowercased(), platform: platform) { [self] result in
            guard case .success = result else { return answer(false, "store_unavailable") }
            logger.info("push target registered", metadata: ["protocol": "gateway", "device": "\(deviceID)", "kind": "apns"])
            answer(true, "registered")
        }
    }

    /// The node went away: everything it owed fails with NOT_CONNECTED.
    func failInvokes(toNode nodeID: String) {
        for (id, waiting) in invokes where waiting.nodeID == nodeID {
            invokes.removeValue(forKey: id)
            waiting.timer.map(loop.cancel)
            waiting.reply(.failure(notConnected()))
        }
    }
}
