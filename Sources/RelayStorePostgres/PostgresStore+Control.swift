import Logging
import PostgresNIO
import RelayCore

/// The operator commands this node runs (`clawrelay devices …` queues them in
/// `operator_commands`, `PostgresControlQueries`), and the pending pairing requests it holds.
extension PostgresStore {
    /// Mirrors this node's pending pairing requests as held by its incarnation, after forgetting
    /// those of its earlier runs (a cluster node starting).
    func holdPendingPairings() throws {
        let node = node
        try run("forget this node's earlier pending pairing requests") { connection, logger in
            try await PostgresOperatorQueries.clearPending(connection, node: node.node, logger: logger)
        }
        journal.pendingHolder.withLock { $0 = node }
    }

    /// Records where this cluster node keeps its data (its audit), for `clawrelay audit --node`.
    public func recordDataDirectory(_ path: String) throws {
        let (node, now) = (node.node, SystemClock().nowMillis())
        try run("record this node's data directory") { connection, logger in
            try await connection.query(
                """
                INSERT INTO node_data_dirs (node_id, data_dir, updated_ms) VALUES (\(node), \(path), \(now))
                ON CONFLICT (node_id) DO UPDATE SET data_dir = excluded.data_dir, updated_ms = excluded.updated_ms
                """,
                logger: logger
            )
        }
    }

    /// The newest operator command's id: the node runs only the commands queued after it.
    public func lastOperatorCommand() throws -> Int64 {
        try run("read the operator commands") { connection, logger in try await PostgresOperatorQueries.lastID(connection, logger: logger) }
    }

    /// The open commands after `id` this node must run, oldest first.
    public func operatorCommands(after id: Int64, completion: @escaping (Result<[OperatorCommand], any Error>) -> Void) {
        let node = node
        journal.perform(
            "read operator commands",
            { connection, logger in try await PostgresControlQueries.open(connection, for: node, after: id, logger: logger) },
            completion: completion
        )
    }

    /// Acknowledges the command with what this node made of it (the command's answer once due).
    public func completeOperatorCommand(id: Int64, result: String, at millis: Int64) {
        let node = node.node
        journal.background("record an operator command's outcome") { connection, logger in
            try await PostgresControlQueries.acknowledge(connection, id: id, node: node, result: result, at: millis, logger: logger)
        }
    }

    /// Starts hearing queued commands (`PostgresControlQueries.channel`) on a connection of its
    /// own; `wake` runs on the watcher's task at each one (and once LISTEN is in place).
    public func watchOperatorCommands(wake: @escaping @Sendable () -> Void) -> PostgresChannelWatch {
        let watch = PostgresChannelWatch(
            settings: settings,
            channel: PostgresControlQueries.channel,
            applicationName: "clawrelay:\(node.node):operator",
            logger: logger,
            wake: wake
        )
        watch.start()
        return watch
    }
}
