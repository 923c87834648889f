import Logging
import PostgresNIO
import RelayCore

/// Run reports (`turn_reports`) and approval records (`approvals`).
enum PostgresUsageQueries {
    /// Stores a run's report, replacing an earlier one of the same run.
    static func saveReport(_ connection: PostgresConnection, _ record: TurnReportRecord, logger: Logger) async throws {
        let report = record.report
        try await connection.query(
            """
            INSERT INTO turn_reports (run_id, user_id, conversation_id, backend, cost_usd, input_tokens, output_tokens, cache_read_tokens,
              cache_creation_tokens, duration_ms, model_turns, permission_denials, terminal_reason, created_ms)
            VALUES (\(record.runID), \(record.userID), \(record.conversationID), \(record.backend), \(report.costUSD), \(report.inputTokens),
              \(report.outputTokens), \(report.cacheReadTokens), \(report.cacheCreationTokens), \(report.durationMillis), \(report.modelTurns),
              \(report.permissionDenials), \(report.terminalReason), \(record.at))
            ON CONFLICT (run_id) DO UPDATE SET user_id = excluded.user_id, conversation_id = excluded.conversation_id, backend = excluded.backend,
              cost_usd = excluded.cost_usd, input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
              cache_read_tokens = excluded.cache_read_tokens, cache_creation_tokens = excluded.cache_creation_tokens,
              duration_ms = excluded.duration_ms, model_turns = excluded.model_turns, permission_denials = excluded.permission_denials,
              terminal_reason = excluded.terminal_reason, created_ms = excluded.created_ms
            """,
            logger: logger
        )
    }

    /// A run's stored report, nil when none.
    static func report(_ connection: PostgresConnection, runID: String, logger: Logger) async throws -> TurnReportRecord? {
        let rows = try await connection.query(
            """
            SELECT user_id, conversation_id, backend, cost_usd, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens,
              duration_ms, model_turns, permission_denials, terminal_reason, created_ms
            FROM turn_reports WHERE run_id = \(runID)
            """,
            logger: logger
        )
        for try await row in rows {
            let row = row.makeRandomAccess()
            let report = TurnReport(
                costUSD: try row["cost_usd"].decode(Double?.self),
                inputTokens: try row["input_tokens"].decode(Int?.self),
                outputTokens: try row["output_tokens"].decode(Int?.self),
                cacheReadTokens: try row["cache_read_tokens"].decode(Int?.self),
                cacheCreationTokens: try row["cache_creation_tokens"].decode(Int?.self),
                durationMillis: try row["duration_ms"].decode(Int?.self),
                modelTurns: try row["model_turns"].decode(Int?.self),
                permissionDenials: try row["permission_denials"].decode(Int.self),
                terminalReason: try row["terminal_reason"].decode(String?.self)
            )
            return TurnReportRecord(
                runID: runID,
                userID: try row["user_id"].decode(String.self),
                conversationID: try row["conversation_id"].decode(String.self),
                backend: try row["backend"].decode(String.self),
                report: report,
                at: try row["created_ms"].decode(Int64.self)
            )
        }
        return nil
    }

    /// Stores (or replaces) an approval's record; its summary is cut to 1,000 characters.
    static func saveApproval(_ connection: PostgresConnection, _ record: ApprovalRecord, logger: Logger) async throws {
        let approval = record.approval
        let resolution = record.resolution
        try await connection.query(
            """
            INSERT INTO approvals (id, short_id, user_id, conversation_id, run_id, backend, tool_name, summary, created_ms, expires_ms, decision,
              cause, decided_by_device, decided_by_name, decided_by_protocol, resolved_ms)
            VALUES (\(approval.id), \(approval.shortID), \(approval.userID), \(approval.conversationID), \(approval.runID), \(approval.backend),
              \(approval.toolName), \(String(approval.summary.prefix(1_000))), \(approval.createdAt), \(approval.expiresAt),
              \(resolution?.decision.rawValue), \(resolution?.cause.rawValue), \(resolution?.by.deviceID), \(resolution?.by.name),
              \(resolution?.by.protocolName), \(resolution?.at))
            ON CONFLICT (id) DO UPDATE SET short_id = excluded.short_id, user_id = excluded.user_id, conversation_id = excluded.conversation_id,
              run_id = excluded.run_id, backend = excluded.backend, tool_name = excluded.tool_name, summary = excluded.summary,
              created_ms = excluded.created_ms, expires_ms = excluded.expires_ms, decision = excluded.decision, cause = excluded.cause,
              decided_by_device = excluded.decided_by_device, decided_by_name = excluded.decided_by_name,
              decided_by_protocol = excluded.decided_by_protocol, resolved_ms = excluded.resolved_ms
            """,
            logger: logger
        )
    }

    /// Every approval left pending is recorded as cancelled by the relay at `millis`.
    static func cancelStaleApprovals(_ connection: PostgresConnection, at millis: Int64, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE approvals SET decision = 'deny', cause = 'cancelled', decided_by_device = '', decided_by_name = 'the relay',
              decided_by_protocol = 'relay', resolved_ms = \(millis)
            WHERE resolved_ms IS NULL
            """,
            logger: logger
        )
    }

    /// A conversation's totals: runs reported, their cost (nil when none said), tokens in and out.
    static func totals(_ connection: PostgresConnection, conversationID: String, logger: Logger) async throws -> UsageTotals {
        let rows = try await connection.query(
            """
            SELECT count(*), sum(cost_usd), coalesce(sum(input_tokens), 0)::bigint, coalesce(sum(output_tokens), 0)::bigint,
              coalesce(sum(permission_denials), 0)::bigint
            FROM turn_reports WHERE conversation_id = \(conversationID)
            """,
            logger: logger
        )
        for try await (runs, cost, input, output, denials) in rows.decode((Int64, Double?, Int64, Int64, Int64).self) {
            return UsageTotals(runs: Int(runs), costUSD: cost, inputTokens: Int(input), outputTokens: Int(output), permissionDenials: Int(denials))
        }
        return UsageTotals(runs: 0, costUSD: nil, inputTokens: 0, outputTokens: 0, permissionDenials: 0)
    }

    /// Approvals, newest first: the pending ones (`pendingOnly`) or all, at most `limit`.
    static func approvals(_ connection: PostgresConnection, pendingOnly: Bool, limit: Int, logger: Logger) async throws -> [ApprovalRow] {
        let rows = try await connection.query(
            """
            SELECT id, short_id, user_id, conversation_id, backend, tool_name, summary, created_ms, expires_ms, decision, cause,
              decided_by_name, decided_by_protocol, decided_by_device, resolved_ms
            FROM approvals WHERE NOT \(pendingOnly) OR resolved_ms IS NULL ORDER BY created_ms DESC, id COLLATE "C" LIMIT \(limit)
            """,
            logger: logger
        )
        var approvals: [ApprovalRow] = []
        for try await row in rows.decode(
            (String, String, String, String, String, String, String, Int64, Int64, String?, String?, String?, String?, String?, Int64?).self
        ) {
            approvals.append(
                ApprovalRow(
                    id: row.0,
                    shortID: row.1,
                    userID: row.2,
                    conversationID: row.3,
                    backend: row.4,
                    toolName: row.5,
                    summary: row.6,
                    createdAt: row.7,
                    expiresAt: row.8,
                    decision: row.9,
                    cause: row.10,
                    decidedBy: row.11,
                    decidedFrom: row.12,
                    deviceID: row.13,
                    resolvedAt: row.14
                )
            )
        }
        return approvals
    }
}
