/// A stretch of a relayed message's path, between two points where it is stamped.
///
/// The points, in the order a message passes them: its frame is received by a bridge; the core
/// submits it to the journal; the journal's writer takes the batch holding it and commits it;
/// the commit's completion runs on the loop ("committed"); the ack is written to the socket; the
/// turn starts on its backend (at once, or after the conversation's previous turns); the first
/// progress arrives; the final answer arrives and is submitted, taken, committed; the final is
/// written to the last device that takes it live. A stage is counted only for messages that
/// passed both of its points (an answer no device takes live has no `final_committed_to_written`).
public enum MessageStage: Int, CaseIterable, Sendable {
    /// The bridge decodes, checks and hands the message to the core.
    case receivedToSubmitted
    /// The message's store write, from submission to its completion on the loop (the sum of the
    /// three `store*` stages below).
    case submittedToCommitted
    /// Waiting for the store writer to take the batch (it is busy with the one before).
    case storeQueue
    /// The writer's transaction, commit and fsync included.
    case storeTransaction
    /// From the commit on the writer thread to the completion running on the loop.
    case storeReturn
    /// The ack, queued on the socket at the commit's completion, until it is written.
    case committedToAckWritten
    /// From the commit to the turn starting on its backend (waiting behind earlier turns of the conversation).
    case committedToTurnStarted
    /// The backend's first progress back on the loop.
    case turnStartedToFirstProgress
    /// The rest of the answer, until the final arrives on the loop and goes to the store.
    case firstProgressToFinal
    /// The final answer's store write, from submission to its completion on the loop.
    case finalToCommitted
    case finalStoreQueue
    case finalStoreTransaction
    case finalStoreReturn
    /// From the final's commit until the last device taking it live has it written to its socket.
    case finalCommittedToWritten
    /// The whole path, frame received to final written.
    case receivedToFinalWritten

    /// The stage's name in `/metrics` and the bench (`received_to_submitted`, …).
    public var label: String {
        switch self {
        case .receivedToSubmitted: "received_to_submitted"
        case .submittedToCommitted: "submitted_to_committed"
        case .storeQueue: "store_queue"
        case .storeTransaction: "store_transaction"
        case .storeReturn: "store_return"
        case .committedToAckWritten: "committed_to_ack_written"
        case .committedToTurnStarted: "committed_to_turn_started"
        case .turnStartedToFirstProgress: "turn_started_to_first_progress"
        case .firstProgressToFinal: "first_progress_to_final"
        case .finalToCommitted: "final_to_committed"
        case .finalStoreQueue: "final_store_queue"
        case .finalStoreTransaction: "final_store_transaction"
        case .finalStoreReturn: "final_store_return"
        case .finalCommittedToWritten: "final_committed_to_written"
        case .receivedToFinalWritten: "received_to_final_written"
        }
    }
}

/// When the journal's writer took a batch and when it committed it (`MonotonicClock` ns).
public struct JournalBatchTiming: Sendable, Equatable {
    public var takenAt: UInt64
    public var committedAt: UInt64

    public init(takenAt: UInt64, committedAt: UInt64) {
        self.takenAt = takenAt
        self.committedAt = committedAt
    }
}
