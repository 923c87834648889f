/// What `SQLiteToPostgres` copies, table by table: each PostgreSQL table's columns and the SQLite
/// query that reads them in that order (`RelayStore/Migrations*.swift` against
/// `PostgresSchema*.swift`, column by column).
///
/// Times need no conversion: the SQLite store keeps every time the core passes in as milliseconds
/// since 1970 in its `*_at` columns, which PostgreSQL names `*_ms`. 0/1 flags become `boolean`,
/// JSON stays text byte for byte. What the SQLite schema keeps differently:
/// - the log: `events.user_id` is the stream; `role` text becomes 0 user, 1 assistant, 2 note; an
///   event's turn (`run_id`) is the message whose user or answer event it is; a turn that ended
///   without an answer (`messages.ended_seq`) becomes a kind-1 event at that seq, `f_<run>`, as
///   `PostgresJournal.fail` writes it;
/// - a message stored before messages had run ids gets `m_<device>:<client id>` as its run id (its
///   events get the same);
/// - a replay over several streams merges them by `events.created_at` (the writing transaction's
///   time) where SQLite takes its rowid: copied events get times a microsecond apart in rowid
///   order, just before the copy's;
/// - the stream clocks (`streams.last`) continue after the highest seq any row took;
/// - the queues (cursors in SQLite, entries in PostgreSQL) are copied by `SQLiteToPostgres+Queues`.
struct TableCopy: Sendable {
    let table: String
    let columns: [CopyColumn]
    let select: String

    init(_ table: String, _ columns: String, _ select: String) {
        self.table = table
        self.columns = CopyColumn.list(columns)
        self.select = select
    }

    /// A message's run id, with the stand-in for rows older than run ids.
    private static let runID = "COALESCE(m.run_id, 'm_' || m.device_id || ':' || m.client_id)"

    static let all: [TableCopy] = [
        TableCopy("users", "id text, created_ms bigint", "SELECT id, created_at FROM users ORDER BY id"),
        TableCopy(
            "devices",
            """
            id text, user_id text, protocol text, claimed_name text, device_info text, is_admin boolean, status text, token_hash text,
            token_delivered boolean, created_ms bigint, last_seen_ms bigint, public_key text, role text, scopes text, presence text,
            presence_ms bigint
            """,
            """
            SELECT id, user_id, protocol, claimed_name, device_info, is_admin, status, token_hash, token_delivered, created_at,
              last_seen_at, public_key, role, scopes, presence, presence_at FROM devices ORDER BY id
            """
        ),
        TableCopy(
            "device_tokens",
            "device_id text, role text, token_hash text, scopes text, issued_ms bigint, revoked_ms bigint",
            "SELECT device_id, role, token_hash, scopes, issued_at, revoked_at FROM device_tokens ORDER BY device_id, role"
        ),
        TableCopy(
            "bot_pairings",
            "device_id text, bot_id text, token_hash text, created_ms bigint",
            "SELECT device_id, bot_id, token_hash, created_at FROM bot_pairings ORDER BY device_id, bot_id"
        ),
        TableCopy(
            "pending_pairings",
            "device_id text, claimed_name text, device_info text, created_ms bigint, expires_ms bigint, protocol text, request_id text, reason text",
            "SELECT device_id, claimed_name, device_info, created_at, expires_at, protocol, request_id, reason FROM pending_pairings ORDER BY device_id"
        ),
        TableCopy("pair_links", "token_hash text, expires_ms bigint, used_ms bigint", "SELECT token_hash, expires_at, used_at FROM pair_links"),
        TableCopy("meta", "key text, value text", "SELECT key, value FROM meta ORDER BY key"),
        TableCopy(
            "push_targets",
            "device_id text, kind text, token text, platform text, created_ms bigint, retired_ms bigint, retired_reason text",
            "SELECT device_id, kind, token, platform, created_at, retired_at, retired_reason FROM push_targets ORDER BY device_id, kind"
        ),
        TableCopy(
            "push_pending",
            """
            id text, device_id text, user_id text, conversation_id text, count bigint, last_seq bigint, failed boolean, text text,
            run_ms bigint, created_ms bigint, due_ms bigint
            """,
            """
            SELECT id, device_id, user_id, conversation_id, count, last_seq, failed, text, run_millis, created_at, due_at
            FROM push_pending ORDER BY id
            """
        ),
        TableCopy(
            "push_attempts",
            "id bigint, at_ms bigint, device_id text, user_id text, conversation_id text, sink text, target text, status bigint, outcome text, reason text",
            "SELECT id, at, device_id, user_id, conversation_id, sink, target, status, outcome, reason FROM push_attempts ORDER BY id"
        ),
        TableCopy(
            "assets",
            "id text, user_id text, mime_type text, size bigint, path text, created_ms bigint",
            "SELECT id, user_id, mime_type, size, path, created_at FROM assets ORDER BY id"
        ),
        TableCopy(
            "accounts",
            "name text, kind text, state text, detail text, updated_ms bigint",
            "SELECT name, kind, state, detail, updated_at FROM accounts ORDER BY name"
        ),
        TableCopy(
            "turn_reports",
            """
            run_id text, user_id text, conversation_id text, backend text, cost_usd double precision, input_tokens bigint,
            output_tokens bigint, cache_read_tokens bigint, cache_creation_tokens bigint, duration_ms bigint, model_turns bigint,
            permission_denials bigint, terminal_reason text, created_ms bigint
            """,
            """
            SELECT run_id, user_id, conversation_id, backend, cost_usd, input_tokens, output_tokens, cache_read_tokens,
              cache_creation_tokens, duration_ms, model_turns, permission_denials, terminal_reason, created_at FROM turn_reports ORDER BY run_id
            """
        ),
        TableCopy(
            "approvals",
            """
            id text, short_id text, user_id text, conversation_id text, run_id text, backend text, tool_name text, summary text,
            created_ms bigint, expires_ms bigint, decision text, cause text, decided_by_device text, decided_by_name text,
            decided_by_protocol text, resolved_ms bigint
            """,
            """
            SELECT id, short_id, user_id, conversation_id, run_id, backend, tool_name, summary, created_at, expires_at, decision, cause,
              decided_by_device, decided_by_name, decided_by_protocol, resolved_at FROM approvals ORDER BY id
            """
        ),
        TableCopy(
            "operator_commands",
            "id bigint, action text, device_id text, user_id text, created_ms bigint, done_ms bigint, result text",
            "SELECT id, action, device_id, user_id, created_at, done_at, result FROM operator_commands ORDER BY id"
        ),
        TableCopy(
            "conversations",
            """
            id text, user_id text, title text, backend text, working_directory text, created_ms bigint, updated_ms bigint,
            archived boolean, archived_ms bigint, change_seq bigint, backend_session text, settings text
            """,
            """
            SELECT id, user_id, title, backend, working_directory, created_at, updated_at, archived, archived_at, change_seq,
              backend_session, settings FROM conversations ORDER BY id
            """
        ),
        TableCopy(
            "conversation_keys",
            "user_id text, scheme text, key text, conversation_id text",
            "SELECT user_id, scheme, key, conversation_id FROM conversation_keys ORDER BY user_id, scheme, key"
        ),
        TableCopy(
            "read_cursors",
            "user_id text, conversation_id text, seq bigint, updated_ms bigint",
            "SELECT user_id, conversation_id, seq, updated_at FROM read_cursors ORDER BY user_id, conversation_id"
        ),
        TableCopy(
            "events",
            """
            stream_id text, seq bigint, id text, kind smallint, conversation_id text, role smallint, content text, device_id text,
            attachments text, run_id text, created_ms bigint, created_at microseconds_before_now
            """,
            """
            SELECT e.user_id, e.seq, e.id, 0, e.conversation, CASE e.role WHEN 'user' THEN 0 WHEN 'assistant' THEN 1 ELSE 2 END,
              e.content, e.device_id, e.attachments, r.run_id, e.created_at, (SELECT MAX(rowid) FROM events) - e.rowid + 1
            FROM events e LEFT JOIN (
              SELECT m.user_event_id AS event_id, \(runID) AS run_id FROM messages m WHERE m.user_event_id IS NOT NULL
              UNION ALL SELECT m.assistant_event_id, \(runID) FROM messages m WHERE m.assistant_event_id IS NOT NULL
            ) r ON r.event_id = e.id
            ORDER BY e.user_id, e.seq
            """
        ),
        TableCopy(
            "events",
            "stream_id text, seq bigint, id text, kind smallint, conversation_id text, content text, run_id text, created_ms bigint",
            """
            SELECT m.user_id, m.ended_seq, 'f_' || \(runID), 1, COALESCE(m.conversation_id, ''), m.reason, \(runID),
              COALESCE(m.ended_at, m.created_at)
            FROM messages m WHERE m.ended_seq IS NOT NULL ORDER BY m.user_id, m.ended_seq
            """
        ),
        TableCopy(
            "messages",
            """
            device_id text, client_id text, stream_id text, conversation_id text, run_id text, content_hash text, attachments_hash text,
            state smallint, user_event_id text, answer_event_id text, answer_seq bigint, ended_seq bigint, reason text, created_ms bigint,
            ended_ms bigint
            """,
            """
            SELECT m.device_id, m.client_id, m.user_id,
              COALESCE(m.conversation_id, (SELECT e.conversation FROM events e WHERE e.id = m.user_event_id), ''), \(runID),
              m.content_hash, m.attachments_hash, m.streaming, COALESCE(m.user_event_id, ''), m.assistant_event_id, m.answer_seq,
              m.ended_seq, m.reason, m.created_at, m.ended_at
            FROM messages m ORDER BY m.device_id, m.client_id
            """
        ),
        TableCopy(
            "streams",
            "stream_id text, last bigint",
            """
            SELECT user_id, MAX(last) FROM (
              SELECT user_id, last FROM user_seqs
              UNION ALL SELECT user_id, MAX(seq) FROM events GROUP BY user_id
              UNION ALL SELECT user_id, MAX(MAX(COALESCE(ended_seq, 0)), MAX(COALESCE(answer_seq, 0))) FROM messages GROUP BY user_id
              UNION ALL SELECT user_id, MAX(change_seq) FROM conversations GROUP BY user_id
              UNION ALL SELECT user_id, MAX(seq) FROM queue_items GROUP BY user_id
            ) GROUP BY user_id ORDER BY user_id
            """
        ),
    ]
}
