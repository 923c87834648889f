/// What carries hints between the nodes of a cluster: positions after commits (durable events stay
/// in the log) and live events (typing, streaming progress, tools), which are at most once.
///
/// On PostgreSQL the store's writer announces positions inside each commit (NOTIFY), so
/// `announce` has nothing to do there; `MemoryFabric` (RelayTesting) carries both in memory
/// between hubs on one loop, and can lose, repeat or hold them back.
///
/// - Important: loop thread only; handlers are called on the loop.
public protocol ClusterFabric: AnyObject {
    /// This node committed writes that moved these streams.
    func announce(_ positions: [StreamPosition])
    /// A live event for a stream's sockets on the other nodes; may be lost.
    func sendLive(_ event: BusEvent, stream: String)
    /// A request for the other nodes (a turn to stop); may be lost.
    func send(_ control: ClusterControl)
    /// Where positions, live events and requests from other nodes go (set once, by the hub).
    func receive(
        positions: @escaping ([StreamPosition]) -> Void,
        live: @escaping (BusEvent, String) -> Void,
        control: @escaping (ClusterControl) -> Void
    )
}

/// What one node asks of or tells the others (at most once: each is a convenience whose durable
/// side is in the store already).
public enum ClusterControl: Sendable, Equatable {
    /// Stop the conversation's turns (or only `runID`) that run or wait there.
    case abort(conversationID: String, runID: String?, reason: String)
    /// A user's read cursor moved (unread counts follow; pushes it covers are dropped).
    case readMoved(ReadCursor)
    /// A conversation was deleted with its history (caches forget it; lists drop it).
    case conversationDeleted(Conversation)
    /// Turns wait for `node` (the node id) in the ledger: it holds their upstream account.
    case turnsHandedOver(node: String)
    /// A device registered a push target through another node: read its targets again.
    case pushTargetsChanged(deviceID: String)
}

/// One durable entry of a stream's log, as a node that did not write it reads it.
public enum StreamEntry: Sendable, Equatable {
    case message(ChatEvent)
    /// A turn that ended without an answer, at the seq its failure took.
    case failure(TurnFailure, seq: Int64)
    /// A conversation as it stands after the change that took `changeSeq`.
    case conversation(Conversation)

    public var seq: Int64 {
        switch self {
        case .message(let event): event.seq
        case .failure(_, let seq): seq
        case .conversation(let conversation): conversation.changeSeq
        }
    }
}

/// The reads a cluster node needs of the shared log.
///
/// - Important: called on the loop; completions run on the loop.
public protocol ClusterJournal: AnyObject {
    /// The stream's entries with seqs in `after+1 ... through`, oldest first, at most `limit`;
    /// seqs with nothing to deliver (answer slots) are left out.
    func streamEntries(_ stream: String, after: Int64, through: Int64, limit: Int, completion: @escaping (Result<[StreamEntry], any Error>) -> Void)
    /// The newest seq of each stream asked for (0 for a stream with none yet).
    func streamHeads(_ streams: [String], completion: @escaping (Result<[String: Int64], any Error>) -> Void)
}

/// How a hub takes part in a cluster: who it is, the fabric that carries hints, the journal's log
/// reads and the cluster's turn queue.
public struct ClusterLink {
    public var node: NodeIncarnation
    public var fabric: any ClusterFabric
    public var journal: any ClusterJournal
    public var ledger: any TurnLedger
    /// How often the heads of the streams with local sockets are read, to heal lost positions.
    public var resyncMillis: Int
    /// Most entries one catch-up read asks for.
    public var readLimit: Int
    /// How often the devices that authenticate by bearer token are read again (pairings,
    /// renames and revocations through other nodes).
    public var deviceRefreshMillis: Int

    public init(
        node: NodeIncarnation,
        fabric: any ClusterFabric,
        journal: any ClusterJournal,
        ledger: any TurnLedger,
        resyncMillis: Int = 1_000,
        readLimit: Int = 500,
        deviceRefreshMillis: Int = 2_000
    ) {
        self.node = node
        self.fabric = fabric
        self.journal = journal
        self.ledger = ledger
        self.resyncMillis = resyncMillis
        self.readLimit = readLimit
        self.deviceRefreshMillis = deviceRefreshMillis
    }
}
