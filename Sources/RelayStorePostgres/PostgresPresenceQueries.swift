import Foundation
import Logging
import PostgresNIO
import RelayCore

/// Each node's presence of a device (`device_sessions`, migration 8) and what the cluster makes of it.
enum PostgresPresenceQueries {
    /// Records the device's state on `node`; `offline` deletes its row there. Only a live
    /// incarnation writes: a node already declared dead (or replaced) records nothing.
    static func record(
        _ connection: PostgresConnection,
        deviceID: String,
        node: NodeIncarnation,
        _ state: DevicePresence.State,
        at millis: Int64,
        logger: Logger
    ) async throws {
        if state == .offline {
            try await connection.query(
                "DELETE FROM device_sessions WHERE device_id = \(deviceID) AND node_id = \(node.node) AND incarnation = \(node.incarnation)",
                logger: logger
            )
            return
        }
        try await connection.query(
            """
            INSERT INTO device_sessions (device_id, node_id, incarnation, state, since_ms)
            SELECT \(deviceID), \(node.node), \(node.incarnation), \(state.rawValue), \(millis)
            WHERE EXISTS (SELECT 1 FROM nodes WHERE node_id = \(node.node) AND incarnation = \(node.incarnation))
            ON CONFLICT (device_id, node_id) DO UPDATE SET incarnation = excluded.incarnation, state = excluded.state, since_ms = excluded.since_ms
            """,
            logger: logger
        )
    }

    /// The device's most present state over the nodes that are alive (their incarnation is the
    /// registered one and their lease has not lapsed); offline when none holds it.
    static func effective(_ connection: PostgresConnection, deviceID: String, logger: Logger) async throws -> DevicePresence.State {
        let rows = try await connection.query(
            """
            SELECT s.state FROM device_sessions s JOIN nodes n ON n.node_id = s.node_id AND n.incarnation = s.incarnation
            WHERE s.device_id = \(deviceID) AND n.expires_at >= now()
            """,
            logger: logger
        )
        var states: [DevicePresence.State] = []
        for try await state in rows.decode(String.self) { states.append(DevicePresence.State(rawValue: state) ?? .offline) }
        return .mostPresent(states)
    }

    /// Every device's presence over the live nodes, nil when no node ever joined a cluster on
    /// this database (a relay on its own keeps `devices.presence`).
    static func listing(_ connection: PostgresConnection, logger: Logger) async throws -> [String: ClusterPresence]? {
        let clustered = try await connection.query("SELECT EXISTS (SELECT 1 FROM nodes)", logger: logger)
        for try await exists in clustered.decode(Bool.self) where !exists { return nil }
        let rows = try await connection.query(
            """
            SELECT s.device_id, s.node_id, s.state FROM device_sessions s
            JOIN nodes n ON n.node_id = s.node_id AND n.incarnation = s.incarnation
            WHERE n.expires_at >= now()
            """,
            logger: logger
        )
        var states: [String: [String: DevicePresence.State]] = [:]
        for try await (deviceID, node, state) in rows.decode((String, String, String).self) {
            states[deviceID, default: [:]][node] = DevicePresence.State(rawValue: state) ?? .offline
        }
        return states.mapValues(ClusterPresence.init(nodes:))
    }
}
