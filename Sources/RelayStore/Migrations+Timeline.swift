import GRDB

extension Migrations {
    /// One clock per user for everything a client syncs by seq: events, the slot an answer holds
    /// while its turn runs, turns that ended without an answer, and conversation changes. Seqs come
    /// from `user_seqs` (seeded with each user's highest event seq), so they stay unique and
    /// increasing but may have gaps.
    static func timelineTables(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE user_seqs (user_id TEXT PRIMARY KEY, last INTEGER NOT NULL);
                INSERT INTO user_seqs (user_id, last) SELECT user_id, MAX(seq) FROM events GROUP BY user_id;
                ALTER TABLE conversations ADD COLUMN archived_at INTEGER;
                ALTER TABLE conversations ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
                UPDATE conversations SET archived_at = updated_at WHERE archived != 0;
                CREATE INDEX conversations_change ON conversations(user_id, change_seq);
                ALTER TABLE messages ADD COLUMN answer_seq INTEGER;
                ALTER TABLE messages ADD COLUMN ended_seq INTEGER;
                ALTER TABLE messages ADD COLUMN ended_at INTEGER;
                CREATE INDEX messages_user_event ON messages(user_event_id);
                CREATE INDEX messages_conversation ON messages(conversation_id);
                CREATE INDEX messages_active ON messages(user_id) WHERE streaming = 1;
                CREATE INDEX messages_ended ON messages(user_id, ended_seq) WHERE ended_seq IS NOT NULL;
                CREATE INDEX events_conversation ON events(conversation, seq);
                CREATE INDEX devices_token ON devices(token_hash);
                """
        )
    }
}
