import GRDB

extension Migrations {
    /// One read cursor per user and conversation (`ReadCursorQueries`). The history stored before
    /// cursors existed counts as read by the conversation's owner, so an upgrade does not show
    /// every old answer as unread.
    static func readCursorTables(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE read_cursors (
                    user_id TEXT NOT NULL,
                    conversation_id TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL,
                    PRIMARY KEY (user_id, conversation_id)
                );
                CREATE INDEX read_cursors_conversation ON read_cursors(conversation_id);
                INSERT INTO read_cursors (user_id, conversation_id, seq, updated_at)
                    SELECT user_id, conversation, MAX(seq), MAX(created_at) FROM events GROUP BY user_id, conversation;
                """
        )
    }
}
