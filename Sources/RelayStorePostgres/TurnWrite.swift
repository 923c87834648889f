import RelayCore

/// One of the journal's turn writes as `relay_turn_writes` takes it: an accept, an answer, a
/// failure or a note. Every id the write stores is chosen here, before it is sent, so the caller
/// can build its result from the seqs the function returns.
struct TurnWrite: Sendable {
    enum Kind: Int16, Sendable {
        case accept = 0
        case answer = 1
        case failure = 2
        case note = 3
        /// A cluster node asks to run a run (`TurnLedger.claim`).
        case claim = 4
    }

    var kind: Kind
    var stream: String
    var conversationID: String
    /// The sending device and its client id (accept), or the turn's (answer, failure); "" for a note.
    var deviceID = ""
    var clientID = ""
    var runID = ""
    /// The event it stores: the user's message, the answer, the note, or the failure (`f_` + run).
    var eventID: String
    /// An accept's answer slot; a failure's placeholder ("" = the stored one).
    var answerEventID = ""
    /// The message, answer or note text; a failure's reason.
    var content: String
    var contentHash = ""
    var attachmentsJSON: String?
    var attachmentsHash = ""
    var senderID = ""
    /// The accept's own refusal (`UserMessage.rejection`), reported only when it is no duplicate.
    var rejected = false
    /// A failure's ended state.
    var endedState = MessageState.failed
    var millis: Int64
    var node: NodeIncarnation?
    /// An accept's `UserMessage.policyBackend` ('' for none), kept on its turn.
    var backend = ""
    var assetIDs: [String] = []
    var queue: [QueueTarget] = []

    static func accept(_ message: UserMessage, runID: String, eventID: String, answerID: String, at millis: Int64, queue: [QueueTarget]) -> TurnWrite
    {
        TurnWrite(
            kind: .accept,
            stream: message.userID,
            conversationID: message.conversationID,
            deviceID: message.deviceID,
            clientID: message.clientID,
            runID: runID,
            eventID: eventID,
            answerEventID: answerID,
            content: message.content,
            contentHash: message.contentHash,
            attachmentsJSON: message.attachmentsJSON,
            attachmentsHash: message.attachmentsHash,
            senderID: message.senderID,
            rejected: message.rejection != nil,
            millis: millis,
            node: message.acceptingNode,
            backend: message.policyBackend ?? "",
            assetIDs: message.assetIDs,
            queue: queue
        )
    }

    static func answer(_ event: ChatEvent, turn: TurnRef, queue: [QueueTarget]) -> TurnWrite {
        TurnWrite(
            kind: .answer,
            stream: event.userID,
            conversationID: event.conversationID,
            deviceID: turn.deviceID,
            clientID: turn.clientID,
            runID: turn.runID,
            eventID: event.id,
            content: event.content,
            millis: event.timestampMillis,
            queue: queue
        )
    }

    static func claim(runID: String, conversationID: String, node: NodeIncarnation) -> TurnWrite {
        TurnWrite(kind: .claim, stream: "", conversationID: conversationID, runID: runID, eventID: "", content: "", millis: 0, node: node)
    }

    static func note(_ event: ChatEvent, queue: [QueueTarget]) -> TurnWrite {
        TurnWrite(
            kind: .note,
            stream: event.userID,
            conversationID: event.conversationID,
            eventID: event.id,
            content: event.content,
            millis: event.timestampMillis,
            queue: queue
        )
    }

    static func failure(_ failure: TurnFailure, queue: [QueueTarget]) -> TurnWrite {
        TurnWrite(
            kind: .failure,
            stream: failure.userID,
            conversationID: failure.conversationID,
            deviceID: failure.turn.deviceID,
            clientID: failure.turn.clientID,
            runID: failure.turn.runID,
            eventID: "f_" + failure.turn.runID,
            answerEventID: failure.answerID ?? "",
            content: failure.reason,
            endedState: failure.cause == .aborted ? .aborted : .failed,
            millis: failure.timestampMillis,
            queue: queue
        )
    }
}

/// What `relay_turn_writes` returned for one write (its `o_*` columns).
struct TurnWriteRow: Sendable, Equatable {
    enum Outcome: Int16, Sendable {
        case stored = 0
        case duplicate = 1
        case mismatch = 2
        case rejected = 3
        case fenced = 4
        case missingAsset = 5
        /// A claim's answer: `state` is `relay_claim_runs`'s code.
        case claim = 6
    }

    var outcome: Outcome
    var state: Int16?
    var runID: String?
    /// The event stored, or the asset an accept lacks.
    var eventID: String?
    var answerEventID: String?
    var seq: Int64?
    var answerSeq: Int64?
}
