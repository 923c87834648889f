import ClawlineWire
import RelayCore
import RelayTransport

extension ClawlineDownstream {
    func perform(_ actions: [ClawlineSocketMachine.Action], on socket: ClawlineSocket) {
        for action in actions { perform(action, on: socket) }
    }

    /// Carries out one action of the socket's machine. `receivedAt`: when the frame that led to it
    /// arrived (`MonotonicClock`), the first point of a message's stages.
    func perform(_ action: ClawlineSocketMachine.Action, on socket: ClawlineSocket, receivedAt: UInt64 = 0) {
        let connection = socket.connection
        switch action {
        case .none:
            break
        case .send(let frame):
            connection.send(text: frame.encoded())
        case .write(let bytes):
            connection.send(utf8: bytes)
        case .event(let event):
            write(event, to: socket)
        case .ack(let clientID, let firstTime):
            // `committedAt`: when the message's commit reached the loop (0 for a retry: not counted).
            let committedAt = firstTime ? MonotonicClock.nanos() : 0
            connection.send(utf8: FastFrames.ack(clientID)) { [weak self] in
                self?.hub.stages.record(.committedToAckWritten, from: committedAt, to: MonotonicClock.nanos())
            }
        case .sendToken(let result, let deviceID):
            connection.send(text: ServerFrame.pairResult(result).encoded()) { [hub] in
                hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID), { $0.device?.tokenDelivered = true }, completion: { _ in })
            }
        case .fail(let error):
            connection.send(text: ServerFrame.error(error.frame).encoded())
            connection.logFailure(
                logger,
                protocol: Self.protocolName,
                device: socket.deviceID,
                code: error.code.rawValue,
                message: error.message,
                closingWith: error.closes ? error.code.closeCode : nil
            )
            if error.closes { connection.close(code: error.code.closeCode, reason: error.code.rawValue) }
        case .close(let code, let reason):
            connection.close(code: code, reason: reason)
        case .pair(let request):
            pair(request, on: socket)
        case .decide(let decision):
            decide(decision, on: socket)
        case .authenticate(let auth):
            authenticate(auth, on: socket)
        case .submit(let message):
            submit(message, on: socket, receivedAt: receivedAt)
        case .typing(let active):
            typing(active, on: socket)
        case .attach(let userID):
            hub.attach(socket, socket: connection.id, userID: userID, protocolName: Self.protocolName, delivery: .replay)
        case .detach(let userID):
            detach(socket, userID: userID)
        case .joinAdmins:
            hub.join(socket, audience: ClawlineChannel.adminAudience)
        case .leaveAdmins:
            hub.leave(socket, audience: ClawlineChannel.adminAudience)
        case .admit(let deviceID, let userID):
            connection.maxMessageBytes = connection.listenerMaxMessageBytes
            connection.deviceID = deviceID
            connection.userID = userID
        case .shown(let conversationID, let seq):
            hub.shown(deviceID: socket.deviceID, conversationID: conversationID, seq: seq)
        }
    }

    /// Takes a socket off the core; when it was the device's last one, its user typing stops and,
    /// as Clawline v1 wants (`cancel_on_disconnect`), its turns are abandoned.
    private func detach(_ socket: ClawlineSocket, userID: String) {
        guard hub.detach(socket, socket: socket.connection.id, userID: userID) else { return }
        if let timer = typingTimers.removeValue(forKey: socket.deviceID) { loop.cancel(timer) }
        typingChanged()
        if settings.cancelOnDisconnect { hub.turns.abandon(deviceID: socket.deviceID) }
    }
}
