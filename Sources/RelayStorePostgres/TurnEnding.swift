import RelayCore

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
