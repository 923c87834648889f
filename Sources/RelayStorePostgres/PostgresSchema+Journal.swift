/// Migration 3: what the core's journal keeps beside the log (SCALE-OUT.md §4.3), as the SQLite
/// store keeps it, types adapted. Times the core passes in (`now`) are stored as they are, in
/// milliseconds since 1970 (`*_ms` columns); the `timestamptz` columns of migration 1 keep the
/// database's own time.
///
/// Rows of the log, as `PostgresJournal` writes them:
/// - `events` kind 0 (a message): role 0 a user's message (`device_id` the sending device,
///   `attachments` its JSON text, byte for byte), 1 the assistant's answer, 2 a relay note (an
///   assistant event no turn owns: `run_id` NULL); kind 1 a turn that ended without an answer
///   (`content` the reason, `run_id` the turn; its message row says failed or aborted). Every row
///   takes a seq of its stream's clock (`relay_take_seqs`) and `created_ms`.
/// - `messages`: one per (device, client id), `stream_id` the conversation owner's stream;
///   `answer_seq` the slot its answer's placeholder holds while active; `ended_seq`, `ended_ms`
///   and `reason` once it ended without an answer.
/// - `conversations`: `change_seq` a seq of the owner's clock taken by every change (creation,
///   edit, reset, archive), so `/sync` finds changed conversations by seq like events.
extension PostgresSchema {
    static let journal = [
        "ALTER TABLE events ALTER COLUMN attachments TYPE text USING attachments::text",
        "ALTER TABLE events ADD COLUMN created_ms bigint NOT NULL DEFAULT (extract(epoch FROM now()) * 1000)::bigint",
        "ALTER TABLE messages ADD COLUMN created_ms bigint NOT NULL DEFAULT (extract(epoch FROM now()) * 1000)::bigint",
        "ALTER TABLE messages ADD COLUMN ended_ms bigint",
        "CREATE INDEX messages_conversation ON messages (conversation_id)",
        "CREATE INDEX messages_active ON messages (stream_id, answer_seq) WHERE state = 1",
        """
        CREATE TABLE conversations (
          id text PRIMARY KEY, user_id text NOT NULL, title text, backend text, working_directory text,
          created_ms bigint NOT NULL, updated_ms bigint NOT NULL, archived boolean NOT NULL DEFAULT false, archived_ms bigint,
          change_seq bigint NOT NULL, backend_session text, settings text)
        """,
        "CREATE INDEX conversations_user ON conversations (user_id, updated_ms DESC)",
        "CREATE INDEX conversations_changes ON conversations (user_id, change_seq)",
        """
        CREATE TABLE conversation_keys (
          user_id text NOT NULL, scheme text NOT NULL, key text NOT NULL, conversation_id text NOT NULL,
          PRIMARY KEY (user_id, scheme, key))
        """,
        "CREATE INDEX conversation_keys_conversation ON conversation_keys (conversation_id)",
        """
        CREATE TABLE read_cursors (
          user_id text NOT NULL, conversation_id text NOT NULL, seq bigint NOT NULL, updated_ms bigint NOT NULL,
          PRIMARY KEY (user_id, conversation_id))
        """,
    ]
}
