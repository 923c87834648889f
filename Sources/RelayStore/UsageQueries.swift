import GRDB
import RelayCore

/// Run reports and approval records.
public enum UsageQueries {
    static func saveReport(_ db: Database, _ record: TurnReportRecord) throws {
        let report = record.report
        try db.run(
            """
            INSERT OR REPLACE INTO turn_reports (run_id, user_id, conversation_id, backend, cost_usd, input_tokens, output_tokens,
                cache_read_tokens, cache_creation_tokens, duration_ms, model_turns, permission_denials, terminal_reason, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                record.runID, record.userID, record.conversationID, record.backend, report.costUSD, report.inputTokens, report.outputTokens,
                report.cacheReadTokens, report.cacheCreationTokens, report.durationMillis, report.modelTurns, report.permissionDenials,
                report.terminalReason, record.at,
            ]
        )
    }

    /// A conversation's totals: runs reported, their cost (nil when none said), tokens in and out.
    public static func totals(_ db: Database, conversationID: String) throws -> UsageTotals {
        let row = try db.row(
            """
            SELECT COUNT(*) AS runs, SUM(cost_usd) AS cost, SUM(input_tokens) AS input, SUM(output_tokens) AS output,
                SUM(permission_denials) AS denials
            FROM turn_reports WHERE conversation_id = ?
            """,
            [conversationID]
        )
        return UsageTotals(
            runs: row?["runs"] ?? 0,
            costUSD: row?["cost"],
            inputTokens: row?["input"] ?? 0,
            outputTokens: row?["output"] ?? 0,
            permissionDenials: row?["denials"] ?? 0
        )
    }

    static func saveApproval(_ db: Database, _ record: ApprovalRecord) throws {
        let approval = record.approval
        let resolution = record.resolution
        try db.run(
            """
            INSERT OR REPLACE INTO approvals (id, short_id, user_id, conversation_id, run_id, backend, tool_name, summary, created_at,
                expires_at, decision, cause, decided_by_device, decided_by_name, decided_by_protocol, resolved_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                approval.id, approval.shortID, approval.userID, approval.conversationID, approval.runID, approval.backend, approval.toolName,
                String(approval.summary.prefix(1_000)), approval.createdAt, approval.expiresAt, resolution?.decision.rawValue,
                resolution?.cause.rawValue, resolution?.by.deviceID, resolution?.by.name, resolution?.by.protocolName, resolution?.at,
            ]
        )
    }

    static func cancelStaleApprovals(_ db: Database, at millis: Int64) throws {
        try db.run(
            """
            UPDATE approvals SET decision = 'deny', cause = 'cancelled', decided_by_device = '', decided_by_name = 'the relay',
                decided_by_protocol = 'relay', resolved_at = ?
            WHERE resolved_at IS NULL
            """,
            [millis]
        )
    }

    /// Approvals, newest first: the pending ones (`pendingOnly`) or all, at most `limit`.
    public static func approvals(_ db: Database, pendingOnly: Bool, limit: Int) throws -> [ApprovalRow] {
        let filter = pendingOnly ? "WHERE resolved_at IS NULL" : ""
        return try db.rows("SELECT * FROM approvals \(filter) ORDER BY created_at DESC, id LIMIT ?", [limit]).map { row in
            ApprovalRow(
                id: row["id"],
                shortID: row["short_id"],
                userID: row["user_id"],
                conversationID: row["conversation_id"],
                backend: row["backend"],
                toolName: row["tool_name"],
                summary: row["summary"],
                createdAt: row["created_at"],
                expiresAt: row["expires_at"],
                decision: row["decision"],
                cause: row["cause"],
                decidedBy: row["decided_by_name"],
                decidedFrom: row["decided_by_protocol"],
                deviceID: row["decided_by_device"],
                resolvedAt: row["resolved_at"]
            )
        }
    }
}
