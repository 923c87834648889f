/// Migration 5: the notification queues of devices that are not in the foreground (Companion's
/// kind). An entry holds the queued item itself (`QueueItem` as JSON), its place in its stream
/// (`stream_id`, `seq`: queues are read in stream order whenever an entry was queued) and when it
/// expires; a device keeps its newest `capacity` entries.
extension PostgresSchema {
    static let queues = [
        """
        CREATE TABLE queue_entries (
          id bigserial PRIMARY KEY, device_id text NOT NULL, stream_id text NOT NULL, seq bigint NOT NULL,
          conversation_id text NOT NULL, item text NOT NULL, queued_ms bigint NOT NULL, expires_ms bigint NOT NULL)
        """,
        "CREATE INDEX queue_entries_device ON queue_entries (device_id, stream_id, seq)",
        "CREATE INDEX queue_entries_expiry ON queue_entries (expires_ms)",
        "CREATE INDEX queue_entries_conversation ON queue_entries (conversation_id)",
    ]
}
