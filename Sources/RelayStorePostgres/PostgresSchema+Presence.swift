/// Migration 8: each cluster node's presence of a device (`device_sessions`, SCALE-OUT.md §4.7),
/// one row per device and node, stamped with the node's incarnation. A device is as present as
/// its most present row whose incarnation is a live node's; a node's rows go with its `nodes`
/// row when it is buried (declared dead or replaced by its restart), and a device that goes
/// offline on a node leaves no row there.
extension PostgresSchema {
    static let presence = [
        """
        CREATE TABLE device_sessions (
          device_id text NOT NULL, node_id text NOT NULL REFERENCES nodes (node_id) ON DELETE CASCADE, incarnation uuid NOT NULL,
          state text NOT NULL, since_ms bigint NOT NULL, PRIMARY KEY (device_id, node_id))
        """,
        "CREATE INDEX device_sessions_node ON device_sessions (node_id)",
    ]
}
