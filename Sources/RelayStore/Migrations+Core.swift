import GRDB
import RelayCore

extension Migrations {
    /// The core's tables: conversations and the keys protocols name them by, notification queues,
    /// push targets, device presence, and message records tied to their conversation and run.
    /// Events move from protocol names to conversation ids: each (user, name) pair already stored
    /// becomes a conversation keyed `session:<name>` (Clawline's timeline was `main`).
    static func coreTables(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE conversations (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL,
                    title TEXT,
                    backend TEXT,
                    working_directory TEXT,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL,
                    archived INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX conversations_user ON conversations(user_id, updated_at);
                CREATE TABLE conversation_keys (
                    user_id TEXT NOT NULL,
                    scheme TEXT NOT NULL,
                    key TEXT NOT NULL,
                    conversation_id TEXT NOT NULL,
                    PRIMARY KEY (user_id, scheme, key)
                );
                CREATE INDEX conversation_keys_conversation ON conversation_keys(conversation_id);
                CREATE TABLE notification_queue (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    device_id TEXT NOT NULL,
                    conversation_id TEXT NOT NULL,
                    item TEXT NOT NULL,
                    queued_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL
                );
                CREATE INDEX notification_queue_device ON notification_queue(device_id, id);
                CREATE INDEX notification_queue_expiry ON notification_queue(expires_at);
                CREATE TABLE push_targets (
                    device_id TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    token TEXT NOT NULL,
                    platform TEXT,
                    created_at INTEGER NOT NULL,
                    PRIMARY KEY (device_id, kind)
                );
                ALTER TABLE devices ADD COLUMN presence TEXT NOT NULL DEFAULT 'offline';
                ALTER TABLE devices ADD COLUMN presence_at INTEGER;
                ALTER TABLE messages ADD COLUMN conversation_id TEXT;
                ALTER TABLE messages ADD COLUMN run_id TEXT;
                ALTER TABLE messages ADD COLUMN reason TEXT;
                """
        )
        let named = try Row.fetchAll(
            db,
            sql: "SELECT user_id, conversation, MIN(created_at) AS created, MAX(created_at) AS updated FROM events GROUP BY user_id, conversation"
        )
        for row in named {
            let (userID, name): (String, String) = (row["user_id"], row["conversation"])
            let id = Conversation.newID()
            let parts = name.split(separator: ":", maxSplits: 2)
            let backend = parts.count >= 2 && parts[0] == "backend" ? String(parts[1]) : nil
            try db.execute(
                sql: "INSERT INTO conversations (id, user_id, backend, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [id, userID, backend, row["created"] as Int64, row["updated"] as Int64]
            )
            try db.execute(
                sql: "INSERT INTO conversation_keys (user_id, scheme, key, conversation_id) VALUES (?, 'session', ?, ?)",
                arguments: [userID, name, id]
            )
            try db.execute(sql: "UPDATE events SET conversation = ? WHERE user_id = ? AND conversation = ?", arguments: [id, userID, name])
        }
    }
}
