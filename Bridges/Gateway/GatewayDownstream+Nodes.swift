import RelayCore
import RelayTransport

/// An operator's `node.invoke` waiting for the node's result.
struct PendingInvoke {
    weak var caller: GatewaySession?
    var requestID: String
    var nodeID: String
    var command: String
    var timer: TimerID?
}

extension GatewayDownstream {
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
        guard let node = nodes[nodeID] else { return session.fail(request.id, notConnected(), close: nil) }
        guard node.commands.isEmpty || node.commands.contains(command) else {
            return session.fail(request.id, .invalid("the node does not declare \(command.prefix(64))"), close: nil)
        }
        let timeout = Int(request.params["timeoutMs"]?.intValue ?? Int64(settings.invokeTimeoutMillis))
        let invokeID = Identifiers.newUUID()
        let timer = loop.schedule(afterMillis: timeout) { [weak self] in
            guard let self, let waiting = invokes.removeValue(forKey: invokeID) else { return }
            let error = GatewayError(
                code: .unavailable, message: "node invoke timed out", details: ["nodeError": .object(["code": .string("TIMEOUT")])])
            waiting.caller?.fail(waiting.requestID, error, close: nil)
        }
        invokes[invokeID] = PendingInvoke(caller: session, requestID: request.id, nodeID: nodeID, command: command, timer: timer)
        let payload: JSONValue = .object([
            "id": .string(invokeID), "nodeId": .string(nodeID), "command": .string(command),
            "paramsJSON": .string((request.params["params"] ?? .null).encoded()), "timeoutMs": .int(Int64(timeout)),
            "idempotencyKey": .string(request.string("idempotencyKey") ?? invokeID),
        ])
        eventSeq += 1
        deliver(GatewayFrame.event("node.invoke.request", payload, seq: eventSeq), to: node)
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
        guard let caller = waiting.caller else { return }
        if request.params["ok"]?.boolValue == true {
            let payloadText = request.string("payloadJSON")
            let payload = payloadText.flatMap { JSONValue.parse($0) } ?? request.params["payload"] ?? .null
            caller.send(
                GatewayFrame.ok(
                    waiting.requestID,
                    .object([
                        "ok": .bool(true), "nodeId": .string(waiting.nodeID), "command": .string(waiting.command), "payload": payload,
                        "payloadJSON": payloadText.map(JSONValue.string) ?? .null,
                    ])))
        } else {
            let nodeError = request.params["error"] ?? .object(["code": .string("UNKNOWN")])
            caller.fail(
                waiting.requestID, GatewayError(code: .unavailable, message: "node reported an error", details: ["nodeError": nodeError]), close: nil)
        }
    }

    /// The node went away: everything it owed fails with NOT_CONNECTED.
    func failInvokes(toNode nodeID: String) {
        for (id, waiting) in invokes where waiting.nodeID == nodeID {
            invokes.removeValue(forKey: id)
            waiting.timer.map(loop.cancel)
            waiting.caller?.fail(waiting.requestID, notConnected(), close: nil)
        }
    }
}
