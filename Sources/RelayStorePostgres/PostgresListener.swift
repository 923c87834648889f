import Logging
import PostgresNIO
import RelayCore
import Synchronization

/// Hears the positions other writers commit (`LISTEN clawrelay_log`) on a connection of its own,
/// and, because notifications are hints that can be lost, resyncs from `streams.last`: after each
/// (re)connect, once LISTEN is in place, and on a timer.
///
/// - Important: `report` runs on the listener's tasks (a notification and a timed resync may
///   report at the same time: keep it short and thread-safe). A notification's positions are
///   reported as sent; a resync reports `(known, last]` for each followed stream that moved past
///   what was reported before.
public final class PostgresListener: Sendable {
    /// Where reported positions came from.
    public enum Source: Sendable, Equatable {
        case notification
        case resync
    }

    /// Counters for metrics and tests.
    public struct Counters: Sendable, Equatable {
        public var connects = 0
        public var reconnects = 0
        public var resyncs = 0
        public var notifications = 0
        /// Notifications of the node's own commits, noted and not reported.
        public var own = 0
    }

    public typealias Connect = @Sendable (_ attempt: Int) async throws -> PostgresConnection
    public typealias Report = @Sendable ([StreamPosition], Source) -> Void
    /// A notification on one of the hint channels: its channel and payload, as sent (at most once).
    public typealias Hint = @Sendable (_ channel: String, _ payload: String) -> Void

    private struct State {
        var followed: [String: Int64] = [:]
        var counters = Counters()
    }

    public static let channel = "clawrelay_log"
    private let connect: Connect
    private let resyncInterval: Duration
    private let backoff: ClosedRange<Duration>
    private let logger: Logger
    private let report: Report
    private let hintChannels: [String]
    private let hint: Hint
    private let state = Mutex(State())
    /// The node's own writers: their positions are noted, not reported.
    private let own: OwnBackends?
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    /// - Parameters:
    ///   - connect: opens the listener's connection (`attempt` counts from 1).
    ///   - backoff: the first and the longest wait between failed connection attempts.
    ///   - hintChannels: more channels to LISTEN on, on the same connection, for `hint`.
    ///   - own: the node's own writers, whose commits are not reported (their writer hands them out).
    public init(
        connect: @escaping Connect,
        resyncInterval: Duration = .seconds(1),
        backoff: ClosedRange<Duration> = .milliseconds(50)...(.seconds(2)),
        hintChannels: [String] = [],
        own: OwnBackends? = nil,
        logger: Logger,
        hint: @escaping Hint = { _, _ in },
        report: @escaping Report
    ) {
        self.connect = connect
        self.resyncInterval = resyncInterval
        self.backoff = backoff
        self.hintChannels = hintChannels
        self.own = own
        self.logger = logger
        self.hint = hint
        self.report = report
    }

    /// A listener on its own connection from `settings`, named `clawrelay:<node>:listener`.
    public convenience init(
        settings: PostgresSettings,
        nodeID: String,
        resyncInterval: Duration = .seconds(1),
        hintChannels: [String] = [],
        own: OwnBackends? = nil,
        logger: Logger,
        hint: @escaping Hint = { _, _ in },
        report: @escaping Report
    ) {
        self.init(
            connect: { attempt in
                let configuration = try settings.configuration(applicationName: "clawrelay:\(nodeID):listener")
                return try await PostgresConnection.connect(configuration: configuration, id: attempt, logger: logger)
            },
            resyncInterval: resyncInterval,
            hintChannels: hintChannels,
            own: own,
            logger: logger,
            hint: hint,
            report: report
        )
    }

    public var counters: Counters { state.withLock { $0.counters } }

    /// Follows `streams` from `delivered` (their last position known to the caller); the next
    /// resync reports anything past it.
    public func follow(_ streams: [String: Int64]) {
        state.withLock { state in
            for (stream, delivered) in streams { state.followed[stream] = max(state.followed[stream] ?? delivered, delivered) }
        }
    }

    public func start() {
        task.withLock { task in
            guard task == nil else { return }
            task = Task { [self] in await self.run() }
        }
    }

    public func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        await running?.value
    }

    private func run() async {
        var attempt = 0
        var delay = backoff.lowerBound
        while !Task.isCancelled {
            attempt += 1
            let connection: PostgresConnection
            do {
                connection = try await connect(attempt)
            } catch {
                logger.warning("postgres listener: cannot connect", metadata: ["error": "\(PostgresStoreError.summary(of: error))"])
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, backoff.upperBound)
                continue
            }
            delay = backoff.lowerBound
            state.withLock { state in
                if state.counters.connects > 0 { state.counters.reconnects += 1 }
                state.counters.connects += 1
            }
            do {
                try await listen(on: connection)
            } catch {
                if !Task.isCancelled {
                    logger.warning(
                        "postgres listener: connection lost; reconnecting",
                        metadata: ["error": "\(PostgresStoreError.summary(of: error))"]
                    )
                }
            }
            try? await connection.close()
        }
    }

    /// LISTEN first (the log, then the hint channels), then resync, then notifications and the
    /// resync timer until the connection fails.
    private func listen(on connection: PostgresConnection) async throws {
        try await connection.listen(on: Self.channel) { notifications in
            try await listenToHints(on: connection, hintChannels[...], []) { hints in try await follow(notifications, hints, connection) }
        }
    }

    /// LISTENs on each of `channels` in turn (each `listen` holds its channel while its body runs).
    private func listenToHints(
        on connection: PostgresConnection,
        _ channels: ArraySlice<String>,
        _ listening: [(String, PostgresNotificationSequence)],
        _ body: @Sendable ([(String, PostgresNotificationSequence)]) async throws -> Void
    ) async throws {
        guard let channel = channels.first else { return try await body(listening) }
        try await connection.listen(on: channel) { hints in
            try await listenToHints(on: connection, channels.dropFirst(), listening + [(channel, hints)], body)
        }
    }

    private func follow(
        _ notifications: PostgresNotificationSequence,
        _ hints: [(String, PostgresNotificationSequence)],
        _ connection: PostgresConnection
    ) async throws {
        try await resync(connection)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (channel, sequence) in hints {
                group.addTask {
                    for try await notification in sequence { self.hint(channel, notification.payload) }
                    throw PostgresStoreError(code: .connectionLost, message: "the notification stream ended")
                }
            }
            group.addTask {
                for try await notification in notifications { self.deliver(notification.payload) }
                throw PostgresStoreError(code: .connectionLost, message: "the notification stream ended")
            }
            group.addTask {
                while true {
                    try await Task.sleep(for: self.resyncInterval)
                    try await self.resync(connection)
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// A notification's positions: noted for the resync, and reported unless this node's own
    /// writer sent them.
    private func deliver(_ payload: String) {
        let (origin, text) = OwnBackends.origin(of: payload)
        let positions = StreamPosition.parse(payload: String(text))
        guard !positions.isEmpty else { return }
        let mine = origin.map { own?.contains($0) == true } ?? false
        state.withLock { state in
            if mine { state.counters.own += 1 } else { state.counters.notifications += 1 }
            for position in positions where state.followed[position.stream] != nil {
                state.followed[position.stream] = max(state.followed[position.stream] ?? 0, position.last)
            }
        }
        if !mine { report(positions, .notification) }
    }

    /// Reads `streams.last` for the followed streams and reports those that moved.
    private func resync(_ connection: PostgresConnection) async throws {
        let streams = state.withLock { Array($0.followed.keys) }
        var moved: [StreamPosition] = []
        if !streams.isEmpty {
            let rows = try await connection.query("SELECT stream_id, last FROM streams WHERE stream_id = ANY(\(streams))", logger: logger)
            var lasts: [String: Int64] = [:]
            for try await (stream, last) in rows.decode((String, Int64).self) { lasts[stream] = last }
            moved = state.withLock { state in
                lasts.compactMap { stream, last in
                    guard let known = state.followed[stream], last > known else { return nil }
                    state.followed[stream] = last
                    return StreamPosition(stream: stream, prev: known, last: last)
                }
            }
        }
        state.withLock { $0.counters.resyncs += 1 }
        if !moved.isEmpty { report(moved.sorted { $0.stream < $1.stream }, .resync) }
    }
}
