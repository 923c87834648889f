import GRDB

extension Migrations {
    /// The write path stops touching a page per user (issue 26): every index a relayed message
    /// writes either grows at its end or is one the reads need.
    /// - `messages_active` (running turns by user) cost two scattered pages per message, an entry
    ///   on accept and its removal on finalize, one leaf per user. `messages_running` keys the same
    ///   rows by `created_at`, so both land on the index's last page whoever sent the message; the
    ///   few running turns are filtered by user when read.
    /// - A conversation's last activity is no longer written on each answer: reads take the newer
    ///   of `updated_at` and its newest answer (`ConversationQueries.activeAt`), one probe of
    ///   `events_conversation`.
    static func leanLog(_ db: Database) throws {
        try db.execute(
            sql: """
                DROP INDEX messages_active;
                CREATE INDEX messages_running ON messages(created_at) WHERE streaming = 1;
                """
        )
    }
}
