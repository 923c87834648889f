extension ConfigDecoder {
    static let clusterKeys = ["node_id", "heartbeat_seconds", "lease_seconds"]

    /// `[cluster]`: `node_id` (printable, at most 200 bytes), `heartbeat_seconds` (1-60) and
    /// `lease_seconds` (more than two heartbeats, at most 600). It needs `[store] kind = "postgres"`.
    static func cluster(_ table: ConfigTable, store: StoreSettings) throws(ConfigError) -> ClusterSettings {
        try table.rejectUnknownKeys(clusterKeys)
        guard store.kind == .postgres else {
            throw table.error(
                .invalidValue,
                "needs [store] kind = \"postgres\": the nodes of a cluster share one PostgreSQL database"
            )
        }
        var settings = ClusterSettings()
        if let nodeID = try table.string("node_id") {
            guard !nodeID.isEmpty, nodeID.utf8.count <= ClusterSettings.maxNodeIDLength,
                !nodeID.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else {
                throw table.error(.invalidValue, key: "node_id", "expected 1 to \(ClusterSettings.maxNodeIDLength) printable bytes")
            }
            settings.nodeID = nodeID
        }
        if let heartbeat = try table.integer("heartbeat_seconds") {
            guard heartbeat <= 60 else { throw table.error(.invalidValue, key: "heartbeat_seconds", "expected 1 to 60, got \(heartbeat)") }
            settings.heartbeatSeconds = heartbeat
        }
        if let lease = try table.integer("lease_seconds") {
            guard lease <= 600 else { throw table.error(.invalidValue, key: "lease_seconds", "expected at most 600, got \(lease)") }
            settings.leaseSeconds = lease
        }
        guard settings.leaseSeconds > 2 * settings.heartbeatSeconds else {
            throw table.error(
                .invalidValue,
                key: "lease_seconds",
                "must be more than two heartbeats (\(2 * settings.heartbeatSeconds) s): one late heartbeat must not make a live node dead"
            )
        }
        return settings
    }
}
