import DiscoClawWire
import RelayCore

/// The protocol of one DiscoClaw WebSocket, as a value: whose socket it is, and what each core
/// event becomes on it. The socket is receive-only: what a client sends leads to nothing.
///
/// Deltas are fragments that concatenate to the final text, so the machine remembers how much of
/// each running answer it has sent. The app only updates rows it already has: a message from
/// another device or protocol is announced with `conversation.updated` (the app then syncs and
/// gets both the message and its answer's placeholder) instead of events for rows it lacks, and
/// the events of the sender's own answers wait until the app can have inserted their rows
/// (`hold`, `release`: `DiscoClawAnswerHolds`).
struct DiscoClawSocketMachine {
    enum Phase: Equatable {
        /// Upgraded; its token not looked at yet.
        case opening
        /// The device's socket, on its user's bus.
        case open(deviceID: String, userID: String)
        /// Closed by the relay, not gone yet: it hears nothing more.
        case closing(deviceID: String, userID: String)
        case closed
    }

    enum Effect: Equatable {
        case send(DiscoClawEvent)
        case close(DiscoClawError)
        /// The socket is the device's: it joins the user's bus.
        case attach(deviceID: String, userID: String)
        case detach(deviceID: String, userID: String)
    }

    /// A running answer as this socket has it: the text sent as deltas and the placeholder's seq.
    private struct Streamed {
        var text: String
        var seq: Int64
    }

    private(set) var phase = Phase.opening
    private var streamed: [String: Streamed] = [:]
    private var holds = DiscoClawAnswerHolds()

    var deviceID: String? {
        switch phase {
        case .open(let deviceID, _), .closing(let deviceID, _): deviceID
        case .opening, .closed: nil
        }
    }

    var userID: String? {
        switch phase {
        case .open(_, let userID), .closing(_, let userID): userID
        case .opening, .closed: nil
        }
    }

    /// The presented token named `device` (nil: it named none, the socket closes). The answers
    /// still `running` go first, each as one delta with all of its text so far; then the socket joins the bus.
    mutating func opened(as device: (id: String, userID: String)?, running: [TurnProgress]) -> [Effect] {
        guard phase == .opening else { return [] }
        guard let device else {
            phase = .closed
            return [.close(.invalidToken)]
        }
        phase = .open(deviceID: device.id, userID: device.userID)
        var effects: [Effect] = []
        for progress in running { effects += stream(progress, always: true) }
        return effects + [.attach(deviceID: device.id, userID: device.userID)]
    }

    /// What a core event becomes on this socket.
    mutating func deliver(_ event: BusEvent) -> [Effect] {
        guard case .open(let deviceID, _) = phase else { return [] }
        switch event {
        case .message(let message) where message.role == .user:
            // The sender learnt of it from its POST; every other device syncs.
            return message.deviceID == deviceID ? [] : conversationChanged(message.conversationID)
        case .message(let message):
            // An assistant message outside a turn (the relay's note) has no row in the app yet.
            guard let turn = message.turn else { return conversationChanged(message.conversationID) }
            // The last progress may be short of the final: the rest goes as one more delta, so
            // the deltas a client concatenated are the answer.
            var effects: [Effect] = []
            if let sent = streamed[message.id] {
                let last = TurnProgress(
                    turn: turn,
                    eventID: message.id,
                    conversationID: message.conversationID,
                    content: message.content,
                    startedAt: 0,
                    seq: sent.seq
                )
                effects = stream(last)
            }
            streamed[message.id] = nil
            let complete = DiscoClawEvent.MessageComplete(
                messageId: message.id,
                conversationId: message.conversationID,
                content: message.content,
                seq: message.seq
            )
            return effects + send(.messageComplete(complete), answer: message.id)
        case .streaming(let progress):
            return stream(progress)
        case .turnFailed(let failure):
            guard let answerID = failure.answerID else { return conversationChanged(failure.conversationID) }
            streamed[answerID] = nil
            let error = DiscoClawEvent.MessageError(messageId: answerID, conversationId: failure.conversationID, error: failure.reason)
            return send(.messageError(error), answer: answerID)
        case .tool(let tool) where tool.phase == .started:
            let start = DiscoClawEvent.ToolStart(messageId: tool.eventID, tool: tool.activity.name, label: tool.activity.label ?? tool.activity.name)
            return send(.toolStart(start), answer: tool.eventID)
        case .tool(let tool):
            let end = DiscoClawEvent.ToolEnd(messageId: tool.eventID, tool: tool.activity.name, result: tool.activity.result)
            return send(.toolEnd(end), answer: tool.eventID)
        case .assistantTyping, .status, .approval:
            // Approvals reach DiscoClaw apps as the relay's notes (an assistant message with no
            // turn: `conversation.updated` above, then the app's `/sync` returns it), answered with
            // `/approve ID`, `/always ID` or `/deny ID` in the conversation.
            return []
        }
    }

    /// The app re-syncs `conversationID`.
    mutating func conversationChanged(_ conversationID: String) -> [Effect] {
        guard case .open = phase else { return [] }
        return [.send(.conversationUpdated(DiscoClawEvent.ConversationUpdated(conversationId: conversationID)))]
    }

    /// The events of `answer` (the reply to this device's `POST`) wait until `release`.
    mutating func hold(_ answer: AnswerSlot, conversationID: String) { holds.hold(answer.id, conversationID: conversationID, seq: answer.seq) }

    /// The app can have inserted the answer's row: its events held so far go, in order.
    mutating func release(_ answerID: String) -> [Effect] {
        let due = holds.release(answerID)
        guard case .open = phase else { return [] }
        return due.map(Effect.send)
    }

    /// Even a slow app has renamed its copy of the message by now: an answer that ended while held
    /// is announced again (`DiscoClawAnswerHolds`).
    mutating func announce(_ answerID: String) -> [Effect] {
        let due = holds.announce(answerID)
        guard case .open = phase else { return [] }
        return due.map(Effect.send)
    }

    /// The device was revoked: the socket closes and hears nothing more.
    mutating func revoke() -> [Effect] {
        guard case .open(let deviceID, let userID) = phase else { return [] }
        phase = .closing(deviceID: deviceID, userID: userID)
        return [.close(.deviceRevoked)]
    }

    /// The socket is gone: it leaves the bus.
    mutating func closed() -> [Effect] {
        defer { phase = .closed }
        switch phase {
        case .open(let deviceID, let userID), .closing(let deviceID, let userID): return [.detach(deviceID: deviceID, userID: userID)]
        case .opening, .closed: return []
        }
    }

    /// What the answer grew by (cut on UTF-8 boundaries, which are scalar boundaries). A backend
    /// that rewrote its text (not an extension of what was sent) gets no delta: `message.complete`
    /// carries the whole text.
    private mutating func stream(_ progress: TurnProgress, always: Bool = false) -> [Effect] {
        let before = streamed[progress.eventID]?.text ?? ""
        let content = progress.content
        guard content.utf8.starts(with: before.utf8), always || content.utf8.count > before.utf8.count else { return [] }
        streamed[progress.eventID] = Streamed(text: content, seq: progress.seq)
        let delta = DiscoClawEvent.MessageDelta(
            messageId: progress.eventID,
            conversationId: progress.conversationID,
            delta: String(decoding: content.utf8.dropFirst(before.utf8.count), as: UTF8.self),
            seq: progress.seq
        )
        return send(.messageDelta(delta), answer: progress.eventID)
    }

    private mutating func send(_ event: DiscoClawEvent, answer: String) -> [Effect] {
        holds.keep(event, of: answer) ? [] : [.send(holds.capped(event))]
    }
}
