import GRDB

extension Migrations {
    /// What runs cost (`turn_reports`, one row per run that reported) and the approvals asked
    /// (`approvals`: who decided what, when), for `clawrelay conversations show` and
    /// `clawrelay approvals`.
    static func usageTables(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE turn_reports (
                    run_id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL,
                    conversation_id TEXT NOT NULL,
                    backend TEXT NOT NULL,
                    cost_usd REAL,
                    input_tokens INTEGER,
                    output_tokens INTEGER,
                    cache_read_tokens INTEGER,
                    cache_creation_tokens INTEGER,
                    duration_ms INTEGER,
                    model_turns INTEGER,
                    permission_denials INTEGER NOT NULL DEFAULT 0,
                    terminal_reason TEXT,
                    created_at INTEGER NOT NULL
                );
                CREATE INDEX turn_reports_conversation ON turn_reports(conversation_id, created_at);
                CREATE TABLE approvals (
                    id TEXT PRIMARY KEY,
                    short_id TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    conversation_id TEXT NOT NULL,
                    run_id TEXT NOT NULL,
                    backend TEXT NOT NULL,
                    tool_name TEXT NOT NULL,
                    summary TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL,
                    decision TEXT,
                    cause TEXT,
                    decided_by_device TEXT,
                    decided_by_name TEXT,
                    decided_by_protocol TEXT,
                    resolved_at INTEGER
                );
                CREATE INDEX approvals_created ON approvals(created_at);
                """
        )
    }
}
