/// The relay's schema in PostgreSQL, as numbered migrations (SCALE-OUT.md §4.3).
///
/// Codes stored as smallint: `turns.state` 0 queued, 1 running, 2 done, 3 failed, 4 aborted;
/// `messages.state` is `MessageState`'s raw value; `events.kind` 0 message, 1 turn failed;
/// `events.role` 0 user, 1 assistant.
enum PostgresSchema {
    /// A migration: its statements run in order in one transaction (postgres-nio sends one
    /// statement per query).
    struct Migration: Sendable {
        var version: Int
        var statements: [String]
    }

    static let migrations: [Migration] = [
        Migration(version: 1, statements: tables + functions),
        Migration(version: 2, statements: cluster),
        Migration(version: 3, statements: journal),
        Migration(version: 4, statements: devices),
        Migration(version: 5, statements: queues),
        Migration(version: 6, statements: turnWrites),
        Migration(version: 7, statements: accounts),
        Migration(version: 8, statements: presence),
        Migration(version: 9, statements: control),
        Migration(version: 10, statements: sharedFiles),
        Migration(version: 11, statements: pushClaims),
        Migration(version: 12, statements: accountRelease),
        Migration(version: 13, statements: accountFiles),
    ]

    static var latestVersion: Int { migrations.last?.version ?? 0 }

    static let tables = [
        """
        CREATE TABLE nodes (
          node_id text PRIMARY KEY, incarnation uuid NOT NULL, config_hash text NOT NULL DEFAULT '',
          started_at timestamptz NOT NULL, heartbeat_at timestamptz NOT NULL, expires_at timestamptz NOT NULL)
        """,
        "CREATE TABLE streams (stream_id text PRIMARY KEY, last bigint NOT NULL, merge_group text)",
        """
        CREATE TABLE events (
          stream_id text NOT NULL, seq bigint NOT NULL, id text NOT NULL UNIQUE, kind smallint NOT NULL,
          conversation_id text NOT NULL, role smallint, content text, device_id text, attachments jsonb, run_id text,
          merge_pos bigint, created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (stream_id, seq))
        """,
        "CREATE INDEX events_conversation ON events (conversation_id, seq)",
        """
        CREATE TABLE messages (
          device_id text NOT NULL, client_id text NOT NULL, stream_id text NOT NULL, conversation_id text NOT NULL,
          run_id text NOT NULL UNIQUE, content_hash text NOT NULL, attachments_hash text NOT NULL, state smallint NOT NULL,
          user_event_id text NOT NULL, answer_event_id text, answer_seq bigint, ended_seq bigint, reason text,
          created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (device_id, client_id))
        """,
        """
        CREATE TABLE turns (
          run_id text PRIMARY KEY, conversation_id text NOT NULL, stream_id text NOT NULL, order_seq bigint NOT NULL,
          backend text NOT NULL, device_id text NOT NULL, client_id text NOT NULL, state smallint NOT NULL,
          node_id text, incarnation uuid, abort_requested boolean NOT NULL DEFAULT false,
          started_at timestamptz, ended_at timestamptz)
        """,
        // The invariant: at most one running turn per conversation, whatever the nodes do.
        "CREATE UNIQUE INDEX turns_one_running ON turns (conversation_id) WHERE state = 1",
        "CREATE INDEX turns_queued ON turns (conversation_id, order_seq) WHERE state = 0",
        "CREATE INDEX turns_incarnation ON turns (incarnation) WHERE state = 1",
    ]
}
