import Foundation
import RelayCore

/// A node's identity in the cluster: its configured id and the incarnation of this start, the
/// token that fences its writes once it is declared dead.
public struct NodeIdentity: Sendable, Hashable, CustomStringConvertible {
    public var nodeID: String
    public var incarnation: UUID

    public init(nodeID: String, incarnation: UUID = UUID()) {
        self.nodeID = nodeID
        self.incarnation = incarnation
    }

    public var description: String { "\(nodeID)/\(incarnation.uuidString.lowercased())" }
}

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

/// What a claim got.
public enum ClaimResult: Sendable, Equatable {
    /// The conversation's oldest queued turn now runs on this node.
    case claimed(runID: String, orderSeq: Int64)
    /// Nothing queued, a turn already running, or this node is not alive.
    case notClaimed
}

/// What a fenced finish or fail did.
public enum FencedWrite: Sendable, Equatable {
    /// Written: the answer or failure event at `position.last`.
    case done(StreamPosition)
    /// Nothing written: the turn is not running on this incarnation (declared dead, or ended).
    case refused

    public var positions: [StreamPosition] {
        if case .done(let position) = self { return [position] }
        return []
    }
}

/// How a running turn ends: with its answer, or without one.
public struct TurnEnding: Sendable {
    public enum Outcome: Sendable {
        /// The answer, stored as event `eventID`.
        case answer(eventID: String, content: String)
        case failure(reason: String, aborted: Bool)
    }

    public var runID: String
    public var outcome: Outcome

    public init(runID: String, _ outcome: Outcome) {
        (self.runID, self.outcome) = (runID, outcome)
    }

    /// `turns.state` once ended: 2 done, 3 failed, 4 aborted.
    var state: Int16 {
        switch outcome {
        case .answer: 2
        case .failure(_, let aborted): aborted ? 4 : 3
        }
    }

    /// The answer's event id ('' for a failure, whose event is named after the run).
    var eventID: String {
        if case .answer(let eventID, _) = outcome { return eventID }
        return ""
    }

    /// The answer's content or the failure's reason.
    var text: String {
        switch outcome {
        case .answer(_, let content): content
        case .failure(let reason, _): reason
        }
    }
}
