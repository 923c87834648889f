import Foundation
import RelayCore

/// A message to accept: what `relay_accept_batch` stores for one `UserMessage`.
public struct AcceptRequest: Sendable {
    /// The stream (the conversation's owner: a user or an audience) whose clock numbers it.
    public var streamID: String
    public var conversationID: String
    public var deviceID: String
    public var clientID: String
    public var runID: String
    public var content: String
    public var contentHash: String
    public var attachmentsJSON: String?
    public var attachmentsHash: String
    /// The backend that will run its turn.
    public var backend: String
    /// New for every attempt: how a writer that lost its connection recognizes its own commit.
    public var userEventID: String
    public var answerEventID: String
    /// The node that registers its turn in the ledger (`UserMessage.acceptingNode`); nil = none.
    public var node: NodeIncarnation?

    public init(_ message: UserMessage, backend: String) {
        streamID = message.userID
        conversationID = message.conversationID
        deviceID = message.deviceID
        clientID = message.clientID
        runID = message.runID ?? Identifiers.newUUID()
        content = message.content
        contentHash = message.contentHash
        attachmentsJSON = message.attachmentsJSON
        attachmentsHash = message.attachmentsHash
        self.backend = backend
        userEventID = Identifiers.newEventID()
        answerEventID = Identifiers.newEventID()
        node = message.acceptingNode
    }
}

/// What an accept found, as `Acceptance` says it for the SQLite journal.
public enum PostgresAcceptance: Sendable, Equatable {
    /// Stored: the user event at `userSeq`, the answer's slot after it, a queued turn; the
    /// stream moved by `position`.
    case fresh(runID: String, userEventID: String, userSeq: Int64, answer: AnswerSlot, position: StreamPosition)
    /// The same client id with the same content was stored before.
    case duplicate(MessageState, runID: String, answer: AnswerSlot?)
    /// The same client id with other content.
    case mismatch

    /// The positions the accept moved (none for a duplicate or a mismatch).
    public var positions: [StreamPosition] {
        if case .fresh(_, _, _, _, let position) = self { return [position] }
        return []
    }
}
