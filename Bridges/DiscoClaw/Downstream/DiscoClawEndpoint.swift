import RelayCore
import RelayTransport

/// One DiscoClaw socket on the bus: core events become the app's WebSocket events.
///
/// Deltas are fragments that concatenate to the final text, so the endpoint remembers how much
/// of each running answer it has sent. The app only updates rows it already has: a message from
/// another device or protocol is announced with `conversation.updated` (the app then syncs and
/// gets both the message and its answer's placeholder) instead of events for rows it lacks.
///
/// - Important: loop thread only.
final class DiscoClawEndpoint: DeviceEndpoint {
    let socket: WebSocketConnection
    let deviceID: String
    let userID: String
    /// Per running answer id, the text already sent as deltas and the placeholder's seq.
    private var sent: [String: (text: String, seq: Int64)] = [:]
    /// Answers whose `POST` reply is not written yet: their events wait (the app ignores events
    /// for rows it does not have).
    private var holding: Set<String> = []
    private var held: [(answerID: String, frame: String)] = []

    init(socket: WebSocketConnection, deviceID: String, userID: String) {
        self.socket = socket
        self.deviceID = deviceID
        self.userID = userID
    }

    func deliver(_ event: BusEvent) {
        switch event {
        case .message(let message) where message.role == .user:
            // The sender learnt of it from its POST; every other device syncs.
            if message.deviceID != deviceID { updated(message.conversationID) }
        case .message(let message):
            // An assistant message outside a turn (a relay command's reply) has no row yet.
            guard message.turn != nil else { return updated(message.conversationID) }
            // The last progress may be short of the final: the rest goes as one more delta, so
            // the deltas a client concatenated are the answer.
            if let turn = message.turn, let streamed = sent[message.id] {
                stream(
                    TurnProgress(
                        turn: turn,
                        eventID: message.id,
                        conversationID: message.conversationID,
                        content: message.content,
                        startedAt: 0,
                        seq: streamed.seq
                    )
                )
            }
            sent.removeValue(forKey: message.id)
            send(
                "message.complete",
                [
                    "messageId": .string(message.id), "conversationId": .string(message.conversationID), "content": .string(message.content),
                    "seq": .int(message.seq),
                ],
                answer: message.id
            )
        case .streaming(let progress):
            stream(progress)
        case .turnFailed(let failure):
            guard let answerID = failure.answerID else { return updated(failure.conversationID) }
            sent.removeValue(forKey: answerID)
            send(
                "message.error",
                ["messageId": .string(answerID), "conversationId": .string(failure.conversationID), "error": .string(failure.reason)],
                answer: answerID
            )
        case .tool(let tool) where tool.phase == .started:
            send(
                "tool.start",
                [
                    "messageId": .string(tool.eventID), "tool": .string(tool.activity.name),
                    "label": .string(tool.activity.label ?? tool.activity.name),
                ],
                answer: tool.eventID
            )
        case .tool(let tool):
            send("tool.end", ["messageId": .string(tool.eventID), "tool": .string(tool.activity.name)], answer: tool.eventID)
        case .assistantTyping:
            break
        }
    }

    /// A running answer on connect: everything so far as one delta.
    func catchUp(_ progress: TurnProgress) {
        sent.removeValue(forKey: progress.eventID)
        stream(progress, always: true)
    }

    /// Sends what the answer grew by (cut on UTF-8 boundaries, which are scalar boundaries). A
    /// backend that rewrote its text (not an extension of what was sent) gets no delta:
    /// `message.complete` carries the whole text.
    private func stream(_ progress: TurnProgress, always: Bool = false) {
        let before = sent[progress.eventID]?.text ?? ""
        let content = progress.content
        guard content.utf8.starts(with: before.utf8), always || content.utf8.count > before.utf8.count else { return }
        sent[progress.eventID] = (content, progress.seq)
        send(
            "message.delta",
            [
                "messageId": .string(progress.eventID), "conversationId": .string(progress.conversationID),
                "delta": .string(String(decoding: content.utf8.dropFirst(before.utf8.count), as: UTF8.self)), "seq": .int(progress.seq),
            ],
            answer: progress.eventID
        )
    }

    /// Events of `answerID` wait until `release`.
    func hold(_ answerID: String) { holding.insert(answerID) }

    func release(_ answerID: String) {
        guard holding.remove(answerID) != nil else { return }
        let (due, rest) = (held.filter { $0.answerID == answerID }, held.filter { $0.answerID != answerID })
        held = rest
        for entry in due { socket.send(text: entry.frame) }
    }

    private func updated(_ conversationID: String) { send("conversation.updated", ["conversationId": .string(conversationID)]) }

    private func send(_ type: String, _ fields: [String: JSONValue], answer: String? = nil) {
        let frame = DiscoClawWire.event(type, fields)
        if let answer, holding.contains(answer) { return held.append((answer, frame)) }
        socket.send(text: frame)
    }
}
