import GatewayWire
import RelayCore

/// `node.event` from a node: `app.state {state: "background"|"foreground"}` moves its presence,
/// `node.presence.alive` (a woken app saying it is there) is recorded as the device last seen,
/// `push.apns.register` makes its APNs token its push target.
extension GatewayDownstream {
    func handleNodeEvent(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let params = request.params(as: NodeEventParams.self)
        let event = params?.event ?? ""
        let payload = params?.body ?? .null
        let answer = { (handled: Bool, reason: String?) in
            socket.reply(request.id, NodeEventAck(event: event, handled: handled, reason: reason))
        }
        if event == "node.presence.alive" {
            guard payload.objectValue != nil else { return answer(false, "invalid_payload") }
            let now = clock.nowMillis()
            return hub.devices.update(DeviceSnapshot.Request(deviceID: socket.deviceID)) {
                $0.device?.lastSeenAt = now
            } completion: { result in
                if case .success = result {
                    answer(true, "persisted")
                } else {
                    answer(false, "store_unavailable")
                }
            }
        }
        if event == "push.apns.register" { return registerAPNs(payload, on: socket, answer: answer) }
        answer(event == "app.state", nil)
        guard event == "app.state" else { return }
        let background = GatewayJSON.decode(AppState.self, from: payload)?.state == "background"
        socket.machine.peer?.isBackground = background
        hub.presence.signal(background ? .backgrounded : .foregrounded, deviceID: socket.deviceID)
        if !background {
            let held = socket.heldInvokes
            socket.heldInvokes = []
            for invoke in held { invoke() }
        }
    }

    /// `push.apns.register {token, topic, environment, transport?}`: the node's APNs token becomes
    /// its push target (OpenClaw's direct transport; the relay-backed one has no token to keep).
    private func registerAPNs(_ payload: JSONValue, on socket: GatewaySocket, answer: @escaping (Bool, String?) -> Void) {
        let registration = GatewayJSON.decode(APNsRegistration.self, from: payload)
        guard registration?.transport?.lowercased() ?? "direct" == "direct" else { return answer(false, "unsupported_transport") }
        guard let token = registration?.token, PushTarget.isAPNsToken(token) else {
            logger.info("push target rejected: not an APNs token in hex", metadata: ["protocol": "gateway", "device": "\(socket.deviceID)"])
            return answer(false, "invalid_payload")
        }
        let platform = registration?.environment.map { String($0.prefix(32)) }
        let deviceID = socket.deviceID
        hub.pushes.register(deviceID: deviceID, kind: .apns, token: token.lowercased(), platform: platform) { [self] result in
            guard case .success = result else { return answer(false, "store_unavailable") }
            logger.info("push target registered", metadata: ["protocol": "gateway", "device": "\(deviceID)", "kind": "apns"])
            answer(true, "registered")
        }
    }
}
