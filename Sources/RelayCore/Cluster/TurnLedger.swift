import Foundation

/// A node of a cluster as it runs now: its configured id (`[cluster] node_id`) and the incarnation
/// it took at start, the fencing token of everything it owns (a node that restarts, or was
/// declared dead and comes back, is a new incarnation).
public struct NodeIncarnation: Sendable, Hashable, CustomStringConvertible {
    public var node: String
    public var incarnation: UUID

    public init(node: String, incarnation: UUID = UUID()) {
        self.node = node
        self.incarnation = incarnation
    }

    public var description: String { "\(node)/\(incarnation.uuidString.lowercased())" }
}

/// What asking to run a turn got.
public enum TurnClaim: Sendable, Equatable {
    /// This node runs it now: no other turn of the conversation runs, none accepted before it waits.
    case running
    /// Another turn of the conversation runs, or one accepted before it waits: ask again later.
    case waiting
    /// Nothing to run here: it ended meanwhile (failed when its node was declared dead), another
    /// node runs it, or the asking node was itself declared dead.
    case ended
}

/// A write about a turn this node no longer owns (it was declared dead and the turn failed, or
/// another node runs it): refused, nothing was stored.
public struct TurnFenced: Error, Sendable, CustomStringConvertible {
    public var runID: String

    public init(runID: String) { self.runID = runID }

    public var description: String { "run \(runID) is no longer this node's (fenced)" }
}

/// The cluster's turn queue: every turn a node accepted for a conversation, in acceptance (user
/// event seq) order, and which node runs one. Exactly one turn per conversation runs at a time,
/// across nodes, in FIFO order. A turn is registered when its message is accepted
/// (`UserMessage.acceptingNode`), released when its answer or failure is stored; finishing or
/// failing a turn that is no longer active is refused with `TurnFenced`.
///
/// - Important: called on the loop; completions run on the loop.
public protocol TurnLedger: AnyObject {
    /// Asks to run `runID` (a turn of `conversationID`) on `node`.
    func claim(runID: String, conversationID: String, node: NodeIncarnation, completion: @escaping (Result<TurnClaim, any Error>) -> Void)
    /// This node gives `runID` back without ending it (its device went away, or it was dropped while
    /// being claimed): its message stays unanswered, a retry claims it again, and the turns behind
    /// it may run.
    func withdraw(runID: String)
    /// `node` is dead: its running turns fail with `reason` (as a restart fails them), each failure
    /// at a seq of its stream, and its waiting turns become `survivor`'s, in their order;
    /// `completion` gets both, for the survivor to hand out and to run.
    func declareDead(
        _ node: NodeIncarnation,
        survivor: NodeIncarnation,
        reason: String,
        now: Int64,
        completion: @escaping (Result<DeadNodeTurns, any Error>) -> Void
    )
    /// Hands `runID`, which `from` claimed or queued, to `holder` (the node holding the upstream
    /// account `backend` names): it keeps its place in its conversation's order and waits for
    /// `holder` to take it (`handedTurns`) and claim it.
    func handOver(
        runID: String,
        from: NodeIncarnation,
        to holder: NodeIncarnation,
        backend: String,
        completion: @escaping (Result<HandOver, any Error>) -> Void
    )
    /// The turns handed to `node` that still wait, oldest first: their stored messages, with the
    /// backend each runs on.
    func handedTurns(to node: NodeIncarnation, completion: @escaping (Result<[AdoptedTurn], any Error>) -> Void)
}

/// What handing a turn to another node did.
public enum HandOver: Int, Sendable, Equatable {
    /// It waits for the holder now.
    case handed = 0
    /// It is not the handing node's any more (that node was declared dead, or the turn ended).
    case notOwned = 1
    /// The holder is not a live node: nothing changed.
    case holderGone = 2
}

/// What became of a dead node's turns.
public struct DeadNodeTurns: Sendable {
    /// Its running turns, failed, with the seqs their failures took.
    public var failed: [(failure: TurnFailure, seq: Int64)]
    /// Its waiting turns, now the survivor's, oldest first: their stored messages, run ids and answer slots.
    public var adopted: [AdoptedTurn]

    public init(failed: [(failure: TurnFailure, seq: Int64)], adopted: [AdoptedTurn]) {
        self.failed = failed
        self.adopted = adopted
    }
}

/// A waiting turn a node takes over from a dead node, or one another node handed it: the message
/// as stored.
public struct AdoptedTurn: Sendable {
    public var message: UserMessage
    public var runID: String
    public var answer: AnswerSlot
    /// The backend it runs on, when the node that handed it over chose one (nil: the conversation's).
    public var backend: String?

    public init(message: UserMessage, runID: String, answer: AnswerSlot, backend: String? = nil) {
        self.message = message
        self.runID = runID
        self.answer = answer
        self.backend = backend
    }
}
