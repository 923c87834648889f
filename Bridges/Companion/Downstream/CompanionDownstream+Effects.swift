import CompanionWire
import RelayCore

/// Performing what a socket's machine decided: frames, the core's calls, the shared sessions.
extension CompanionDownstream {
    func perform(_ effects: [CompanionSocketMachine.Effect], on socket: CompanionSocket) {
        for effect in effects { perform(effect, on: socket) }
    }

    private func perform(_ effect: CompanionSocketMachine.Effect, on socket: CompanionSocket) {
        switch effect {
        case .send(let text):
            socket.send(text)
        case .close(let close):
            socket.connection.close(code: close.code, reason: close.reason)
        case .admit:
            admit(socket)
        case .attach:
            rememberDevice(socket.deviceID, name: CompanionAuth.deviceName(for: socket.connection.headers))
            hub.attach(socket, socket: socket.connection.id, userID: settings.userID, protocolName: "companion", delivery: settings.delivery)
        case .detach(let held):
            recentlyHeld[socket.deviceID] = (held, clock.nowMillis())
            hub.detach(socket, socket: socket.connection.id, userID: settings.userID)
        case .foreground(let held):
            hub.presence.signal(.foregrounded, deviceID: socket.deviceID)
            for conversationID in held { sessions.setBackgrounded(conversationID: conversationID, false) }
            // Nothing live reached it while away: the prompt waiting now.
            showPrompt(.foregrounded, on: socket)
        case .presence(let presence):
            setPresence(presence, on: socket)
        case .subscribe(let subscribe, let requestID):
            self.subscribe(subscribe, requestID: requestID, on: socket)
        case .turn(let turn):
            startTurn(turn, on: socket)
        case .release(let sessionID):
            socket.machine.release(sessions.conversationID(ofSession: sessionID))
        case .registerPush(let token, let platform, let requestID):
            registerPush(token: token, platform: platform, requestID: requestID, on: socket)
        case .permission(let answer, let choice, let shown, let requestID):
            answerPermission(answer, choice: choice, shown: shown, requestID: requestID, on: socket)
        case .rejectedPushTarget(let length):
            logger.info(
                "push target rejected: not an APNs token in hex",
                metadata: ["protocol": "companion", "device": "\(socket.deviceID)", "length": "\(length)"]
            )
        }
    }

    private func admit(_ socket: CompanionSocket) {
        let connection = socket.connection
        sockets[connection.id] = socket
        socket.downstream = self
        connection.deviceID = socket.deviceID
        connection.userID = settings.userID
        recentlyHeld.removeValue(forKey: socket.deviceID)
    }

    /// The socket holds the session: it hears it live, and the session counts as used.
    func hold(_ session: CompanionSessions.Session, on socket: CompanionSocket, command: Bool = false) {
        socket.machine.hold(session.conversationID)
        sessions.touch(session, command: command)
    }

    /// `subscribe`: the sessions that exist are held, then `subscribed`, then what the device
    /// missed, then the permission prompt it shows (again) if one is waiting.
    private func subscribe(_ subscribe: Subscribe, requestID: String?, on socket: CompanionSocket) {
        var remaining = subscribe.sessionIds.count
        let finish = { [self] in
            socket.send(
                CompanionSocketMachine.reply(
                    Subscribed(events: subscribe.events, sessionIds: subscribe.sessionIds),
                    requestID: requestID,
                    now: clock.nowMillis()
                )
            )
            hub.queue.drain(deviceID: socket.deviceID, to: socket)
            showPrompt(.foregrounded, on: socket)
        }
        guard remaining > 0 else { return finish() }
        for id in subscribe.sessionIds {
            sessions.find(id) { [self] result in
                if case .success(let session?) = result { hold(session, on: socket) }
                remaining -= 1
                if remaining == 0 { finish() }
            }
        }
    }

    /// The device's presence, and the named session's (or this socket's sessions') idle allowance.
    private func setPresence(_ presence: SessionPresence, on socket: CompanionSocket) {
        let backgrounded = presence.backgrounded
        hub.presence.signal(backgrounded ? .backgrounded : .foregrounded, deviceID: socket.deviceID)
        if let sessionID = presence.sessionId, !sessionID.isEmpty, let session = sessions.session(sessionID) {
            sessions.setBackgrounded(sessionID: sessionID, backgrounded)
            if !backgrounded { socket.machine.hold(session.conversationID) }
        } else {
            for conversationID in socket.machine.held { sessions.setBackgrounded(conversationID: conversationID, backgrounded) }
        }
        if !backgrounded {
            hub.queue.drain(deviceID: socket.deviceID, to: socket)
            showPrompt(.foregrounded, on: socket)
        }
    }

    /// The APNs token is kept for pushes to this device.
    private func registerPush(token: String, platform: String, requestID: String?, on socket: CompanionSocket) {
        let deviceID = socket.deviceID
        hub.pushes.register(deviceID: deviceID, kind: .apns, token: token, platform: platform) { [self] result in
            let now = clock.nowMillis()
            switch result {
            case .success:
                logger.info(
                    "push target registered",
                    metadata: ["protocol": "companion", "device": "\(deviceID)", "kind": "apns", "platform": "\(platform)"]
                )
                socket.send(CompanionSocketMachine.reply(DeviceRegistered(), requestID: requestID, now: now))
            case .failure:
                socket.send(CompanionSocketMachine.error(.notStored("device token"), requestID: requestID, now: now))
            }
        }
    }
}
