import Foundation
import Logging
import PostgresNIO
import RelayCore

/// The log reads of a cluster node (`ClusterJournal`) on a connection of their own: a stream's
/// entries by seq range (message events, and failures as `.failure`), and streams' heads.
///
/// Conversations are not in PostgreSQL yet, so no `.conversation` entry is ever read.
///
/// - Important: call on the loop; completions run on `executor`, the loop's.
public final class PostgresClusterJournal: ClusterJournal, Sendable {
    private let connection: SharedConnection
    private let executor: any LoopExecutor
    private let logger: Logger
    /// The node's writer, when heads must be read in order with its other reads (see `streamHeads`).
    private let writer: PostgresWriter?

    public init(settings: PostgresSettings, nodeID: String, executor: any LoopExecutor, writer: PostgresWriter? = nil, logger: Logger) {
        connection = SharedConnection(settings: settings, applicationName: "clawrelay:\(nodeID):reader", logger: logger)
        self.executor = executor
        self.writer = writer
        self.logger = logger
    }

    public func streamEntries(
        _ stream: String,
        after: Int64,
        through: Int64,
        limit: Int,
        completion: @escaping (Result<[StreamEntry], any Error>) -> Void
    ) {
        read(completion) { connection, logger in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: PostgresLogEntries.columns) FROM events e LEFT JOIN messages m ON m.run_id = e.run_id
                WHERE e.stream_id = \(stream) AND e.seq > \(after) AND e.seq <= \(through) ORDER BY e.seq LIMIT \(limit)
                """,
                logger: logger
            )
            var entries: [StreamEntry] = []
            for try await row in rows.decode(PostgresLogEntries.Row.self) { entries.append(PostgresLogEntries.entry(row, stream: stream)) }
            return entries
        }
    }

    /// With a writer, the heads are read on its connection, in submission order: a socket's
    /// follower asks for its stream's head before its bridge asks for the socket's replay, so the
    /// head is never newer than the replay (an event committed between the two reads would be in
    /// neither); one older than the replay only makes the follower read again what the socket
    /// drops as already replayed.
    public func streamHeads(_ streams: [String], completion: @escaping (Result<[String: Int64], any Error>) -> Void) {
        let heads: @Sendable (PostgresConnection, Logger) async throws -> [String: Int64] = { connection, logger in
            let rows = try await connection.query("SELECT stream_id, last FROM streams WHERE stream_id = ANY(\(streams))", logger: logger)
            var heads = Dictionary(streams.map { ($0, Int64(0)) }, uniquingKeysWith: { first, _ in first })
            for try await (stream, last) in rows.decode((String, Int64).self) { heads[stream] = last }
            return heads
        }
        guard let writer else { return read(completion, heads) }
        writer.perform(.reporting("read stream heads", on: executor, heads, completion: completion))
    }

    /// Closes the reads' connection.
    public func close() async { await connection.close() }

    /// Runs `query` on the reads' connection; its result goes to `completion` on the loop.
    private func read<Value: Sendable>(
        _ completion: @escaping (Result<Value, any Error>) -> Void,
        _ query: @escaping @Sendable (PostgresConnection, Logger) async throws -> Value
    ) {
        let done = LoopBound(completion, loop: executor)
        let (connection, logger) = (connection, logger)
        Task {
            let result: Result<Value, any Error>
            do {
                result = .success(try await query(try await connection.connection(), logger))
            } catch let error as PostgresStoreError {
                result = .failure(error)
            } catch {
                let code: PostgresStoreError.Code = PostgresStoreError.isConnectionFailure(error) ? .connectionLost : .rejected
                result = .failure(PostgresStoreError(code: code, message: "cannot read the log: \(PostgresStoreError.summary(of: error))"))
            }
            done.loop.execute { done.value(result) }
        }
    }
}
