import RelayCore

extension PostgresJournal: NodePresenceJournal {
    public func recordPresence(deviceID: String, on node: NodeIncarnation, state: DevicePresence.State, now: Int64) {
        background("record the node's presence") { connection, logger in
            try await PostgresPresenceQueries.record(connection, deviceID: deviceID, node: node, state, at: now, logger: logger)
        }
    }

    public func clusterPresence(deviceID: String, completion: @escaping (Result<DevicePresence.State, any Error>) -> Void) {
        perform(
            "read the cluster's presence",
            { connection, logger in try await PostgresPresenceQueries.effective(connection, deviceID: deviceID, logger: logger) },
            completion: completion
        )
    }
}
