import Logging
import PostgresNIO
import RelayCore
import Synchronization

/// The node's one writer: operations queue, and each batch of up to 512 operations of one kind
/// goes to PostgreSQL as one call of that kind's PL/pgSQL function — one round trip, one
/// transaction, ending with the NOTIFY of the positions it moved.
///
/// - Important: completions run on `executor` after the commit, in submission order. When the
///   connection drops mid-batch the writer re-reads by key before answering (SCALE-OUT.md §4.4,
///   "Ambiguous commits"); what it cannot settle fails with `.connectionLost`, never a false success.
public final class PostgresWriter: Sendable {
    public typealias Completion<Value> = @Sendable (Result<Value, PostgresStoreError>) -> Void

    enum Operation: Sendable {
        case accept(AcceptRequest, Completion<PostgresAcceptance>)
        case claim(conversationID: String, Completion<ClaimResult>)
        case end(TurnEnding, Completion<FencedWrite>)
        case withdraw(runID: String, Completion<Bool>)
        case declareDead(DeadNodeRequest, Completion<DeadNodeTurns>)
        /// One journal operation (`PostgresJournal`), run alone in submission order.
        case work(JournalWork)
        /// One of the journal's turn writes; a run of them is one `relay_turn_writes` call.
        case turnWrite(TurnWrite, Completion<TurnWriteRow>)

        var kind: Int {
            switch self {
            case .accept: 0
            case .claim: 1
            case .end: 2
            case .withdraw: 4
            case .declareDead: 5
            case .work: 6
            case .turnWrite: 7
            }
        }
    }

    private struct State {
        var queue: [Operation] = []
        var stopped = false
        /// While above zero, the writer leaves the queue alone (`gather`).
        var gathering = 0
    }

    static let maxBatch = 512
    let node: NodeIncarnation
    /// The backend of this writer's connection, for the node's listener (`OwnBackends`).
    public let ownBackends = OwnBackends()
    let settings: PostgresSettings
    let logger: Logger
    /// Where completions run (the loop's).
    let executor: any LoopExecutor
    private let state = Mutex(State())
    private let wakeup: AsyncStream<Void>.Continuation
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    /// Starts the writer; it connects on its first batch.
    public init(settings: PostgresSettings, node: NodeIncarnation, executor: any LoopExecutor, logger: Logger) {
        self.settings = settings
        self.node = node
        self.executor = executor
        self.logger = logger
        let (wakeups, wakeup) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.wakeup = wakeup
        let task = Task { [self] in await self.run(wakeups) }
        self.task.withLock { $0 = task }
    }

    public func accept(_ request: AcceptRequest, completion: @escaping Completion<PostgresAcceptance>) {
        submit(.accept(request, completion))
    }

    /// Claims the oldest queued turn of `conversationID` for this node's incarnation.
    public func claim(conversationID: String, completion: @escaping Completion<ClaimResult>) {
        submit(.claim(conversationID: conversationID, completion))
    }

    /// Ends a turn running on this incarnation with its answer or its failure; `.refused` (nothing
    /// written) when it no longer runs here. Answers and failures share batches.
    public func end(_ end: TurnEnding, completion: @escaping Completion<FencedWrite>) {
        submit(.end(end, completion))
    }

    /// Queues a journal operation behind everything submitted before it.
    func perform(_ work: JournalWork) { submit(.work(work)) }

    /// Queues a turn write behind everything submitted before it; the turn writes queued together
    /// go out as one call.
    func write(_ write: TurnWrite, completion: @escaping Completion<TurnWriteRow>) { submit(.turnWrite(write, completion)) }

    /// Runs `submit`, which queues operations, and lets the writer take none of them before it
    /// returns: they go out together as far as their kinds and `maxBatch` allow.
    public func gather(_ submit: () -> Void) {
        state.withLock { $0.gathering += 1 }
        submit()
        state.withLock { $0.gathering -= 1 }
        wakeup.yield()
    }

    /// Finishes the queued work, then closes the connection; later operations fail with `.stopped`.
    public func stop() async {
        state.withLock { $0.stopped = true }
        wakeup.yield()
        wakeup.finish()
        await task.withLock { $0 }?.value
    }

    func submit(_ operation: Operation) {
        let accepted = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.queue.append(operation)
            return true
        }
        if accepted {
            wakeup.yield()
        } else {
            let error = PostgresStoreError(code: .stopped, message: "the PostgreSQL writer was stopped")
            deliver([{ Self.complete(operation, with: error) }])
        }
    }

    private func run(_ wakeups: AsyncStream<Void>) async {
        var session = WriterSession(writer: self)
        for await _ in wakeups {
            while let batch = takeBatch() {
                deliver(await session.execute(batch))
            }
        }
        while let batch = takeBatch() { deliver(await session.execute(batch)) }
        await session.close()
    }

    /// The longest run of queued operations of one kind, at most `maxBatch`.
    private func takeBatch() -> [Operation]? {
        state.withLock { state in
            guard state.gathering == 0 || state.stopped, let first = state.queue.first else { return nil }
            let count = state.queue.prefix(Self.maxBatch).prefix { $0.kind == first.kind }.count
            let batch = Array(state.queue.prefix(count))
            state.queue.removeFirst(count)
            return batch
        }
    }

    /// Runs a batch's completions in one job on the executor, in order.
    private func deliver(_ reports: [@Sendable () -> Void]) {
        executor.execute {
            for report in reports { report() }
        }
    }

    static func complete(_ operation: Operation, with error: PostgresStoreError) {
        switch operation {
        case .accept(_, let completion): completion(.failure(error))
        case .claim(_, let completion): completion(.failure(error))
        case .end(_, let completion): completion(.failure(error))
        case .withdraw(_, let completion): completion(.failure(error))
        case .declareDead(_, let completion): completion(.failure(error))
        case .work(let work): work.fail(error)
        case .turnWrite(_, let completion): completion(.failure(error))
        }
    }
}
