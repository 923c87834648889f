import GRDB

/// The relay database's schema, one migration per version; never edit a shipped one.
enum Migrations {
    static func relay() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE users (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL);
                    CREATE TABLE devices (
                        id TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL,
                        protocol TEXT NOT NULL DEFAULT 'clawline',
                        claimed_name TEXT,
                        device_info TEXT,
                        is_admin INTEGER NOT NULL DEFAULT 0,
                        status TEXT NOT NULL,
                        token_hash TEXT,
                        token_delivered INTEGER NOT NULL DEFAULT 0,
                        created_at INTEGER NOT NULL,
                        last_seen_at INTEGER
                    );
                    CREATE INDEX devices_user ON devices(user_id);
                    CREATE TABLE events (
                        user_id TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        id TEXT NOT NULL UNIQUE,
                        conversation TEXT NOT NULL,
                        role TEXT NOT NULL,
                        content TEXT NOT NULL,
                        device_id TEXT,
                        attachments TEXT,
                        created_at INTEGER NOT NULL,
                        PRIMARY KEY (user_id, seq)
                    );
                    CREATE TABLE messages (
                        device_id TEXT NOT NULL,
                        client_id TEXT NOT NULL,
                        user_id TEXT NOT NULL,
                        content_hash TEXT NOT NULL,
                        attachments_hash TEXT NOT NULL,
                        streaming INTEGER NOT NULL,
                        ack_sent INTEGER NOT NULL DEFAULT 0,
                        user_event_id TEXT,
                        assistant_event_id TEXT,
                        created_at INTEGER NOT NULL,
                        PRIMARY KEY (device_id, client_id)
                    );
                    CREATE TABLE assets (
                        id TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL,
                        mime_type TEXT NOT NULL,
                        size INTEGER NOT NULL,
                        path TEXT NOT NULL,
                        created_at INTEGER NOT NULL
                    );
                    CREATE TABLE operator_commands (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        action TEXT NOT NULL,
                        device_id TEXT NOT NULL,
                        user_id TEXT,
                        created_at INTEGER NOT NULL,
                        done_at INTEGER,
                        result TEXT
                    );
                    CREATE TABLE pending_pairings (
                        device_id TEXT PRIMARY KEY,
                        claimed_name TEXT,
                        device_info TEXT,
                        created_at INTEGER NOT NULL,
                        expires_at INTEGER NOT NULL
                    );
                    """
            )
        }
        migrator.registerMigration("v2-gateway") { db in
            try db.execute(
                sql: """
                    ALTER TABLE devices ADD COLUMN public_key TEXT;
                    ALTER TABLE devices ADD COLUMN role TEXT;
                    ALTER TABLE devices ADD COLUMN scopes TEXT;
                    ALTER TABLE pending_pairings ADD COLUMN protocol TEXT NOT NULL DEFAULT 'clawline';
                    ALTER TABLE pending_pairings ADD COLUMN request_id TEXT;
                    """
            )
        }
        migrator.registerMigration("v3-accounts") { db in
            try db.execute(
                sql: """
                    CREATE TABLE accounts (
                        name TEXT PRIMARY KEY,
                        kind TEXT NOT NULL,
                        state TEXT NOT NULL,
                        detail TEXT NOT NULL,
                        updated_at INTEGER NOT NULL
                    );
                    """
            )
        }
        migrator.registerMigration("v4-pair-links") { db in
            try db.execute(
                sql: """
                    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                    CREATE TABLE pair_links (token_hash TEXT PRIMARY KEY, expires_at INTEGER NOT NULL, used_at INTEGER);
                    CREATE TABLE bot_pairings (
                        device_id TEXT NOT NULL,
                        bot_id TEXT NOT NULL,
                        token_hash TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        PRIMARY KEY (device_id, bot_id)
                    );
                    """
            )
        }
        migrator.registerMigration("v5-core", migrate: coreTables)
        migrator.registerMigration("v6-device-tokens") { db in
            // Gateway device tokens are per device and role; the one a device had moves here.
            try db.execute(
                sql: """
                    CREATE TABLE device_tokens (
                        device_id TEXT NOT NULL,
                        role TEXT NOT NULL,
                        token_hash TEXT,
                        scopes TEXT,
                        issued_at INTEGER NOT NULL,
                        revoked_at INTEGER,
                        PRIMARY KEY (device_id, role)
                    );
                    INSERT INTO device_tokens (device_id, role, token_hash, scopes, issued_at, revoked_at)
                        SELECT id, role, CASE WHEN token_hash = 'revoked' THEN NULL ELSE token_hash END, scopes,
                               COALESCE(last_seen_at, created_at), CASE WHEN token_hash = 'revoked' THEN created_at END
                        FROM devices WHERE protocol = 'gateway' AND role IS NOT NULL AND token_hash IS NOT NULL;
                    """
            )
        }
        migrator.registerMigration("v7-push") { db in
            // Targets are retired (kept, for `devices list`) rather than deleted; pushes wait in
            // push_pending until due; every send attempt is kept in push_attempts.
            try db.execute(
                sql: """
                    ALTER TABLE push_targets ADD COLUMN retired_at INTEGER;
                    ALTER TABLE push_targets ADD COLUMN retired_reason TEXT;
                    CREATE TABLE push_pending (
                        id TEXT PRIMARY KEY,
                        device_id TEXT NOT NULL,
                        user_id TEXT NOT NULL,
                        conversation_id TEXT NOT NULL,
                        count INTEGER NOT NULL,
                        last_seq INTEGER NOT NULL,
                        failed INTEGER NOT NULL,
                        text TEXT NOT NULL,
                        run_millis INTEGER NOT NULL,
                        created_at INTEGER NOT NULL,
                        due_at INTEGER NOT NULL
                    );
                    CREATE TABLE push_attempts (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        at INTEGER NOT NULL,
                        device_id TEXT NOT NULL,
                        user_id TEXT,
                        conversation_id TEXT NOT NULL,
                        sink TEXT NOT NULL,
                        target TEXT NOT NULL,
                        status INTEGER NOT NULL,
                        outcome TEXT NOT NULL,
                        reason TEXT NOT NULL
                    );
                    CREATE INDEX push_attempts_at ON push_attempts (at);
                    """
            )
        }
        migrator.registerMigration("v8-timeline", migrate: timelineTables)
        migrator.registerMigration("v9-backend-session") { db in
            // A backend's own session id per conversation (Claude Code's --resume), as it last reported it.
            try db.execute(sql: "ALTER TABLE conversations ADD COLUMN backend_session TEXT")
        }
        migrator.registerMigration("v10-read-cursors", migrate: readCursorTables)
        migrator.registerMigration("v11-lean-writes", migrate: leanWrites)
        migrator.registerMigration("v12-usage", migrate: usageTables)
        migrator.registerMigration("v13-pairing-reason") { db in
            // Why a pending device must be approved (the gateway's not-paired, scope-upgrade, …), for `devices list`.
            try db.execute(sql: "ALTER TABLE pending_pairings ADD COLUMN reason TEXT")
        }
        migrator.registerMigration("v14-lean-log", migrate: leanLog)
        migrator.registerMigration("v15-queue-cursors", migrate: queueCursors)
        migrator.registerMigration("v16-conversation-settings") { db in
            // The user's settings per conversation (thinking level, pinned, category, …) as JSON; NULL = none set.
            try db.execute(sql: "ALTER TABLE conversations ADD COLUMN settings TEXT")
        }
        return migrator
    }

    static func audit() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE audit (
                        id INTEGER PRIMARY KEY,
                        time INTEGER NOT NULL,
                        connection INTEGER NOT NULL,
                        protocol TEXT NOT NULL,
                        direction TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        device_id TEXT,
                        user_id TEXT,
                        opcode TEXT NOT NULL,
                        size INTEGER NOT NULL,
                        body TEXT NOT NULL
                    );
                    CREATE INDEX audit_time ON audit(time);
                    CREATE INDEX audit_device ON audit(device_id, time);
                    """
            )
        }
        // No query reads audit_device: `clawrelay audit --device` matches a prefix with substr(),
        // which no index serves, and every listing walks the rowid in id order (EXPLAIN QUERY PLAN:
        // SEARCH audit USING INTEGER PRIMARY KEY (rowid>?) with or without it). Its 64-odd insertion
        // points made most of the audit's WAL pages.
        migrator.registerMigration("v2-drop-audit-device") { db in
            try db.execute(sql: "DROP INDEX IF EXISTS audit_device")
        }
        // audit_time cost every audited frame an index insert (a third of the audit writer's
        // SQLite work); `--since` and retention find their first row by a binary search over the
        // rowid instead (`AuditQueries.firstID`), since rows are appended in time order.
        migrator.registerMigration("v3-drop-audit-time") { db in
            try db.execute(sql: "DROP INDEX IF EXISTS audit_time")
        }
        return migrator
    }
}
