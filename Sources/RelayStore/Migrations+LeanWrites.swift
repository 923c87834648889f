import GRDB

extension Migrations {
    /// Fewer pages written per relayed message (the store writer's cost at low load is mostly its
    /// pages: two `pwrite`s each, and their share of the commit's `fdatasync`):
    /// - `messages_conversation` goes: a conversation's records are found through its user events
    ///   (`messages_user_event`), and the timeline reads running and failed answers through the
    ///   per-user partial indexes;
    /// - `conversations_user` holds only the user, so an answer's `updated_at` touch no longer moves
    ///   an index entry (a user's list is sorted when read);
    /// - `messages.ack_sent`, written and never read since the relay stopped flipping it, is dropped.
    static func leanWrites(_ db: Database) throws {
        try db.execute(
            sql: """
                DROP INDEX messages_conversation;
                DROP INDEX conversations_user;
                CREATE INDEX conversations_user ON conversations(user_id);
                ALTER TABLE messages DROP COLUMN ack_sent;
                """
        )
    }
}
