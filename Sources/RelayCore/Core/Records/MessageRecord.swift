/// The record of one client message, keyed by device and client id, created at receipt.
public struct MessageRecord: Sendable, Equatable {
    public var deviceID: String
    public var clientID: String
    public var contentHash: String
    public var attachmentsHash: String
    /// `messages.streaming`: 0 finalized, 1 active, 2 failed, 3 aborted.
    public var state: MessageState
    public var userEventID: String?
    public var assistantEventID: String?
    public var runID: String
    /// Why the turn ended without an answer.
    public var reason: String?
    /// The seq the answer's placeholder holds (nil for records older than answer slots).
    public var answerSeq: Int64?
    public var userID: String = ""
    public var conversationID: String?

    /// The answer's slot, when the record was given one.
    public var answer: AnswerSlot? {
        guard let id = assistantEventID, let seq = answerSeq else { return nil }
        return AnswerSlot(id: id, seq: seq)
    }

    public init(
        deviceID: String,
        clientID: String,
        contentHash: String,
        attachmentsHash: String,
        state: MessageState,
        userEventID: String?,
        assistantEventID: String?,
        runID: String,
        reason: String?,
        answerSeq: Int64?,
        userID: String = "",
        conversationID: String? = nil
    ) {
        self.deviceID = deviceID
        self.clientID = clientID
        self.contentHash = contentHash
        self.attachmentsHash = attachmentsHash
        self.state = state
        self.userEventID = userEventID
        self.assistantEventID = assistantEventID
        self.runID = runID
        self.reason = reason
        self.answerSeq = answerSeq
        self.userID = userID
        self.conversationID = conversationID
    }
}
