import Foundation
import RelayCore

/// A `result` line: how Claude Code says a turn ended, and what it cost.
///
/// Seen with Claude Code 2.1.x: success is `subtype: "success"` with `is_error: false`; an API
/// error is `subtype: "success"`, `is_error: true`, `api_error_status` and `terminal_reason:
/// "api_error"` (its text is the CLI's "API Error: 529 …"); an interrupted turn and a refused
/// `--resume` are `error_during_execution` with `errors[]`; `total_cost_usd` counts the whole
/// process, `model_usage_since_last_result` this turn.
struct ClaudeResult: Sendable, Equatable {
    var subtype: String
    var isError: Bool
    var text: String?
    var sessionID: String?
    var apiErrorStatus: Int?
    var terminalReason: String?
    var errors: [String]
    var numTurns: Int?
    /// The whole process's cost so far.
    var totalCostUSD: Double?
    /// This turn's cost, when the CLI says it (`model_usage_since_last_result`).
    var turnCostUSD: Double?
    var report: TurnReport

    init(_ json: JSONValue) {
        subtype = json["subtype"]?.stringValue ?? ""
        isError = json["is_error"]?.boolValue ?? (subtype != "success")
        text = json["result"]?.stringValue
        sessionID = json["session_id"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        apiErrorStatus = json["api_error_status"]?.integerValue
        terminalReason = json["terminal_reason"]?.stringValue
        errors = (json["errors"]?.arrayValue ?? []).compactMap(\.stringValue).prefix(8).map { String($0.prefix(500)) }
        numTurns = json["num_turns"]?.integerValue
        totalCostUSD = json["total_cost_usd"]?.numberValue
        if let models = json["model_usage_since_last_result"]?.objectValue {
            turnCostUSD = models.values.compactMap { $0["costUSD"]?.numberValue }.reduce(0, +)
        }
        let usage = json["usage"]
        report = TurnReport(
            inputTokens: usage?["input_tokens"]?.integerValue,
            outputTokens: usage?["output_tokens"]?.integerValue,
            cacheReadTokens: usage?["cache_read_input_tokens"]?.integerValue,
            cacheCreationTokens: usage?["cache_creation_input_tokens"]?.integerValue,
            durationMillis: json["duration_ms"]?.integerValue,
            modelTurns: numTurns,
            permissionDenials: json["permission_denials"]?.arrayValue?.count ?? 0,
            terminalReason: terminalReason
        )
    }

    var succeeded: Bool { subtype == "success" && !isError }

    /// This turn's report, its cost from the turn's own usage, else the process total less what
    /// it was before the turn.
    func report(previousTotalUSD: Double?) -> TurnReport {
        var report = report
        if let turnCostUSD {
            report.costUSD = turnCostUSD
        } else if let totalCostUSD {
            report.costUSD = max(0, totalCostUSD - (previousTotalUSD ?? 0))
        }
        return report
    }

    /// Why the turn failed, in words a person can act on.
    var failureReason: String {
        if let status = apiErrorStatus ?? (terminalReason == "api_error" ? 0 : nil) {
            // "API Error: 529 Overloaded. This is a server-side issue…" → "Overloaded. This is…"
            var detail = (text ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            if detail.hasPrefix("API Error: ") { detail.removeFirst("API Error: ".count) }
            if status != 0, detail.hasPrefix("\(status) ") { detail.removeFirst("\(status) ".count) }
            let code = status == 0 ? "" : " \(status)"
            return "Claude Code API error\(code)" + (detail.isEmpty ? "" : ": \(detail.prefix(400))")
        }
        let said = errors.filter { !$0.hasPrefix("[ede_diagnostic]") }
        if !said.isEmpty { return "Claude Code failed: " + said.joined(separator: "; ") }
        switch subtype {
        case "error_max_turns": return "Claude Code stopped: it reached its limit of turns" + Self.detail(text)
        case "error_max_budget_usd": return "Claude Code stopped: it reached its budget" + Self.detail(text)
        default:
            let reason = terminalReason.map { " (\($0))" } ?? ""
            return "Claude Code reported \(subtype.isEmpty ? "an error" : subtype)\(reason)" + Self.detail(text)
        }
    }

    private static func detail(_ text: String?) -> String {
        guard let text, !text.isEmpty else { return "" }
        return ": \(text.prefix(300))"
    }
}
