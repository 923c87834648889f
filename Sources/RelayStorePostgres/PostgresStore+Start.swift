import Logging
import PostgresNIO
import RelayCore

/// What `clawrelay serve` reads and settles before its loop serves, and the operator commands it
/// runs (`clawrelay devices …` queues them in `operator_commands`).
extension PostgresStore {
    /// A single node's start: every device offline, turns the last stop cut off failed
    /// (returned), operator commands nobody ran dropped, upstream account rows cleared.
    public func prepareForStart(now: Int64) throws -> [MessageRecord] {
        try run("settle what the last stop left") { connection, logger in
            try await connection.transaction(logger) {
                try await PostgresDeviceQueries.resetPresence(connection, logger: logger)
                let failed = try await PostgresMessageQueries.failActive(connection, at: now, logger: logger)
                try await PostgresOperatorQueries.clearPending(connection, logger: logger)
                try await PostgresAccountQueries.clear(connection, logger: logger)
                return failed
            }
        }
    }

    public func storedDevices() throws -> [DeviceRecord] {
        try run("read the devices") { connection, logger in try await PostgresDeviceQueries.all(connection, logger: logger) }
    }

    public func gatewayFingerprint() throws -> String {
        try run("read the gateway fingerprint") { connection, logger in
            try await PostgresPairingLinkQueries.fingerprint(connection, logger: logger)
        }
    }

    /// The value every node shares under `key` (the Clawline signing key, …): the one stored, or
    /// `proposed` when this node is the first to ask.
    public func sharedValue(_ key: String, proposed: String) throws -> String {
        try run("read the shared \(key)") { connection, logger in
            try await PostgresMetaQueries.shared(connection, key: key, proposed: proposed, logger: logger)
        }
    }

    public func lastOperatorCommand() throws -> Int64 {
        try run("read the operator commands") { connection, logger in try await PostgresOperatorQueries.lastID(connection, logger: logger) }
    }

    public func operatorCommands(after id: Int64, completion: @escaping (Result<[OperatorCommand], any Error>) -> Void) {
        journal.perform(
            "read operator commands",
            { connection, logger in try await PostgresOperatorQueries.pending(connection, after: id, logger: logger) },
            completion: completion
        )
    }

    public func completeOperatorCommand(id: Int64, result: String, at millis: Int64) {
        journal.background("record an operator command's outcome") { connection, logger in
            try await PostgresOperatorQueries.complete(connection, id: id, result: result, at: millis, logger: logger)
        }
    }
}
