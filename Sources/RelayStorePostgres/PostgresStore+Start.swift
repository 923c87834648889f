import Logging
import PostgresNIO
import RelayCore

/// What `clawrelay serve` reads and settles before its loop serves.
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
}
