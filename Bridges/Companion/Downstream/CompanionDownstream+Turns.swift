import CompanionWire
import Foundation
import RelayCore

/// Turns from sockets: the request's session first (found, adopted or opened), then the turn.
extension CompanionDownstream {
    func startTurn(_ turn: CompanionTurnRequest, on socket: CompanionSocket) {
        let fail = { [self] (error: CompanionError) in socket.send(turn.failure(error, now: clock.nowMillis())) }
        if case .streamSend(let requestID) = turn.kind, let sessionID = turn.sessionID {
            sessions.find(sessionID) { [self] result in
                switch result {
                case .failure(let error): fail(error)
                case .success(nil): fail(.invalidSession(sessionID))
                case .success(let session?):
                    hold(session, on: socket, command: true)
                    socket.send(CompanionSocketMachine.reply(status(of: session, "processing"), requestID: requestID, now: clock.nowMillis()))
                    run(turn.text ?? "", in: session, clientID: turn.clientID, deviceID: socket.deviceID, failed: fail)
                }
            }
            return
        }
        sessions.forCommand(id: turn.sessionID, directory: turn.directory, fallback: turn.fallbackDirectory) { [self] result in
            switch result {
            case .failure(let error):
                fail(error)
            case .success(let session):
                hold(session, on: socket, command: turn.text != nil)
                if case .streamStart(let requestID, let initialPrompt) = turn.kind {
                    if let initialPrompt, !initialPrompt.isEmpty { sessions.setInitialPrompt(session, initialPrompt) }
                    let name = (session.workingDirectory as NSString).lastPathComponent
                    let started = StreamStarted(sessionId: session.sessionID, sessionName: name, workingDirectory: session.workingDirectory)
                    socket.send(CompanionSocketMachine.reply(started, requestID: requestID, now: clock.nowMillis()))
                    hub.queue.drain(deviceID: socket.deviceID, to: socket)
                }
                guard let text = turn.text, !text.isEmpty else { return }
                run(text, in: session, clientID: turn.clientID, deviceID: socket.deviceID, failed: fail)
            }
        }
    }

    func status(of session: CompanionSessions.Session, _ status: String) -> SessionStatus {
        SessionStatus(
            sessionId: session.sessionID,
            status: status,
            lastActivity: CompanionTimestamp.string(session.lastActivity),
            messageCount: session.conversationStarted ? 1 : 0
        )
    }

    /// Submits a turn for `deviceID`; `failed` hears why when it could not start, `started` its
    /// run id once it is stored.
    func run(
        _ text: String,
        in session: CompanionSessions.Session,
        readOnly: Bool = false,
        clientID: String,
        deviceID: String,
        failed: @escaping (CompanionError) -> Void,
        started: ((String) -> Void)? = nil
    ) {
        var message = UserMessage(
            conversationID: session.conversationID,
            userID: settings.userID,
            deviceID: deviceID,
            clientID: clientID,
            content: text
        )
        message.readOnly = readOnly
        let (sessionID, maxQueued) = (session.sessionID, settings.maxQueuedCommands)
        hub.turns.submit(message, policy: settings.turnPolicy) { outcome in
            switch outcome {
            case .accepted(_, let runID, _), .duplicate(.active, let runID, _): started?(runID)
            case .duplicate(.finalized, _, _): failed(.alreadyAnswered(sessionID: sessionID))
            case .duplicate: failed(.alreadyFailed(sessionID: sessionID))
            case .mismatch: failed(.requestIDReused(sessionID: sessionID))
            case .queueFull: failed(.queueFull(maxQueued, sessionID: sessionID))
            case .rejected, .missingAsset, .storeFailed: failed(.notStored("command", sessionID: sessionID))
            }
        }
    }
}
