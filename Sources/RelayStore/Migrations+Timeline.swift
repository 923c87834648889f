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

/// The per-user clock every synced row takes its seq from.
public enum SeqQueries {
    /// Takes `count` consecutive seqs of `userID`'s clock and returns the first.
    public static func next(_ db: Database, userID: String, count: Int64 = 1) throws -> Int64 {
        try next(WriterStatements(db), userID: userID, count: count)
    }

    /// `next` through raw statements: an UPDATE and a read of the row instead of an upsert with
    /// RETURNING, which SQLite runs through an ephemeral table (the profile had it at a fifth of
    /// the writer's instructions).
    static func next(_ statements: WriterStatements, userID: String, count: Int64 = 1) throws -> Int64 {
        try statements.run(.seqBump) {
            $0.bind(1, userID)
            $0.bind(2, count)
        }
        guard statements.changes > 0 else {
            try statements.run(.seqStart) {
                $0.bind(1, userID)
                $0.bind(2, count)
            }
            return 1
        }
        guard let last = try statements.int64(.seqLast, { $0.bind(1, userID) }) else { throw StoreError("user \(userID) has no seq clock") }
        return last - count + 1
    }
}
