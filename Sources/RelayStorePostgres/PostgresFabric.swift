import Logging
import PostgresNIO
import RelayCore
import Synchronization

/// A node's `ClusterFabric` on PostgreSQL: positions from a `PostgresListener` (the writers'
/// commits NOTIFY them, so `announce` has nothing to do), live events and requests as NOTIFY on
/// `clawrelay_live` and `clawrelay_control` (`HintCodec`), at most once, sent in order on a
/// connection of their own, everything queued while the previous send was out in one statement.
/// A node ignores what it sent itself. Streaming progress is coalesced per stream and turn while
/// the sender is busy: each progress carries the whole text so far, so only the newest waiting
/// one goes (a token-rate backend costs NOTIFYs at the sender's pace).
///
/// - Important: call on the loop; handlers run on `executor`, the loop's, in arrival order.
public final class PostgresFabric: ClusterFabric, Sendable {
    /// Counters for metrics and tests.
    public struct Counters: Sendable, Equatable {
        public var sent = 0
        /// Live events whose payload would not fit in a NOTIFY (the durable final repairs them).
        public var oversized = 0
        /// Streaming progress replaced by a newer one of the same turn before it was sent.
        public var coalesced = 0
        /// Hints lost to a send that failed.
        public var sendFailures = 0
        public var received = 0
        public var undecodable = 0
    }

    /// The hub's handlers: set and called on the loop only.
    private final class Handlers {
        var positions: ([StreamPosition]) -> Void = { _ in }
        var live: (BusEvent, String) -> Void = { _, _ in }
        var control: (ClusterControl) -> Void = { _ in }
    }

    /// Largest payload sent (PostgreSQL takes under 8,000 bytes).
    static let maxPayload = 7_899
    private let node: String
    private let logger: Logger
    private let handlers: LoopBound<Handlers>
    private let listener: PostgresListener
    private let sender: SharedConnection
    /// What the sender takes next: a hint as it is, or the newest waiting progress of a turn.
    private enum Outgoing: Sendable {
        case hint(channel: String, payload: String)
        case progress(key: String)
    }

    /// The newest progress payload of each turn waiting to be sent, by `stream|run`.
    private final class WaitingProgress: Sendable {
        private let state = Mutex([String: String]())

        /// Keeps `payload` as the turn's newest; true when none was waiting (the sender must be told).
        func keep(_ payload: String, key: String) -> Bool {
            state.withLock { waiting in
                defer { waiting[key] = payload }
                return waiting[key] == nil
            }
        }

        func take(_ key: String) -> String? { state.withLock { $0.removeValue(forKey: key) } }
    }

    /// What waits for the sender, in order; `wake` tells it there is some.
    private final class Outbox: Sendable {
        private let queue = Mutex<[Outgoing]>([])

        func append(_ next: Outgoing) { queue.withLock { $0.append(next) } }

        func takeAll() -> [Outgoing] {
            queue.withLock { queue in
                defer { queue.removeAll(keepingCapacity: true) }
                return queue
            }
        }
    }

    private let outbox = Outbox()
    private let wake: AsyncStream<Void>.Continuation
    private let waiting = WaitingProgress()
    private let sending: Task<Void, Never>
    private let tally: Tally

    /// `own`: the node's writers, whose commits its listener leaves to them (`OwnBackends`).
    public init(
        settings: PostgresSettings,
        node: String,
        executor: any LoopExecutor,
        resyncInterval: Duration = .seconds(1),
        own: OwnBackends? = nil,
        logger: Logger
    ) {
        let handlers = LoopBound(Handlers(), loop: executor)
        let tally = Tally()
        self.node = node
        self.logger = logger
        self.handlers = handlers
        self.tally = tally
        listener = PostgresListener(
            settings: settings,
            nodeID: node,
            resyncInterval: resyncInterval,
            hintChannels: [HintCodec.liveChannel, HintCodec.controlChannel],
            own: own,
            logger: logger,
            hint: { channel, payload in Self.received(channel, payload, self: node, handlers, tally) },
            report: { positions, _ in handlers.loop.execute { handlers.value.positions(positions) } }
        )
        sender = SharedConnection(settings: settings, applicationName: "clawrelay:\(node):hints", logger: logger)
        let (wakeups, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.wake = wake
        sending = Task { [sender, waiting, outbox] in
            for await _ in wakeups {
                while let hints = Self.take(outbox, waiting) { await Self.notify(hints, on: sender, tally, logger) }
            }
        }
    }

    /// Everything queued, in order, progress resolved to its newest text; nil when nothing is.
    private static func take(_ outbox: Outbox, _ waiting: WaitingProgress) -> [(channel: String, payload: String)]? {
        let queued = outbox.takeAll()
        guard !queued.isEmpty else { return nil }
        return queued.compactMap { next in
            switch next {
            case .hint(let channel, let payload): (channel, payload)
            case .progress(let key): waiting.take(key).map { (HintCodec.liveChannel, $0) }
            }
        }
    }

    /// One statement for `hints`, a NOTIFY each, in order.
    private static func notify(_ hints: [(channel: String, payload: String)], on sender: SharedConnection, _ tally: Tally, _ logger: Logger) async {
        guard !hints.isEmpty else { return }
        do {
            try await sender.connection().query(
                "SELECT pg_notify(c, p) FROM unnest(\(hints.map(\.channel))::text[], \(hints.map(\.payload))::text[]) AS t(c, p)",
                logger: logger
            )
            tally.count { $0.sent += hints.count }
        } catch {
            tally.count { $0.sendFailures += hints.count }
            logger.warning(
                "postgres fabric: hints were lost",
                metadata: ["count": "\(hints.count)", "error": "\(PostgresStoreError.summary(of: error))"]
            )
        }
    }

    public var counters: Counters { tally.counters }

    /// The listener's counters (its first resync follows its LISTENs).
    public var listenerCounters: PostgresListener.Counters { listener.counters }

    /// Starts hearing other nodes (positions, live events, requests).
    public func start() { listener.start() }

    /// Stops hearing, sends what is queued, and closes the connections.
    public func stop() async {
        await listener.stop()
        wake.finish()
        await sending.value
        await sender.close()
    }

    /// Streams whose moves the listener's resync reports, from their delivered positions.
    public func follow(_ streams: [String: Int64]) { listener.follow(streams) }

    public func announce(_: [StreamPosition]) {}

    public func sendLive(_ event: BusEvent, stream: String) {
        guard let payload = HintCodec.encode(live: event, stream: stream, origin: node) else { return }
        guard payload.utf8.count <= Self.maxPayload else { return tally.count { $0.oversized += 1 } }
        guard case .streaming(let progress) = event else {
            return enqueue(.hint(channel: HintCodec.liveChannel, payload: payload))
        }
        let key = stream + "|" + progress.turn.runID
        if waiting.keep(payload, key: key) {
            enqueue(.progress(key: key))
        } else {
            tally.count { $0.coalesced += 1 }
        }
    }

    public func send(_ control: ClusterControl) {
        let payload = HintCodec.encode(control: control, origin: node)
        guard payload.utf8.count <= Self.maxPayload else {
            logger.warning("postgres fabric: a request too large to send was dropped", metadata: ["bytes": "\(payload.utf8.count)"])
            return
        }
        enqueue(.hint(channel: HintCodec.controlChannel, payload: payload))
    }

    private func enqueue(_ next: Outgoing) {
        outbox.append(next)
        wake.yield()
    }

    public func receive(
        positions: @escaping ([StreamPosition]) -> Void,
        live: @escaping (BusEvent, String) -> Void,
        control: @escaping (ClusterControl) -> Void
    ) {
        // The hub registers while it is built, which may be before its loop runs: the handlers
        // are set on the loop, ahead of anything heard (the listener starts later, and hops there too).
        let handlers = handlers
        handlers.loop.execute(with: (positions, live, control)) { received in
            let current = handlers.value
            (current.positions, current.live, current.control) = received
        }
    }

    /// A hint heard on the listener's connection: decoded there, handed to the loop unless this node sent it.
    private static func received(_ channel: String, _ payload: String, self node: String, _ handlers: LoopBound<Handlers>, _ tally: Tally) {
        if channel == HintCodec.liveChannel, let (origin, stream, event) = HintCodec.decodeLive(payload) {
            guard origin != node else { return }
            tally.count { $0.received += 1 }
            handlers.loop.execute { handlers.value.live(event, stream) }
        } else if channel == HintCodec.controlChannel, let (origin, control) = HintCodec.decodeControl(payload) {
            guard origin != node else { return }
            tally.count { $0.received += 1 }
            handlers.loop.execute { handlers.value.control(control) }
        } else {
            tally.count { $0.undecodable += 1 }
        }
    }

    /// The counters, shared with the listener's and the sender's tasks.
    private final class Tally: Sendable {
        private let state = Mutex(Counters())

        var counters: Counters { state.withLock { $0 } }

        func count(_ change: (inout Counters) -> Void) { state.withLock { change(&$0) } }
    }
}
