import ArgumentParser
import Foundation
import RelayCore

/// `clawrelay approvals`: what backends asked the users (Claude Code's permission prompts), who
/// answered, how and when. Answers come from the apps (or `/approve ID` in any conversation).
struct Approvals: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List approvals: pending ones, and with --all the recent ones with who decided."
    )
    @OptionGroup var options: DataOptions
    @Flag(help: "Resolved approvals too, newest first.") var all = false
    @Option(help: "At most this many (1-10000).") var limit = 50
    @Flag(help: "One JSON array instead of a table.") var json = false

    func validate() throws {
        guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be 1 to 10000") }
    }

    func run() throws {
        let store = Devices.openStore(options)
        let rows = try store.approvals(pendingOnly: !all, limit: limit)
        if json { return print(JSONValue.array(rows.map(Self.json)).encoded()) }
        if rows.isEmpty { return print(all ? "no approvals" : "no pending approvals (--all shows resolved ones)") }
        print("ID  ASKED  CONVERSATION  BACKEND  TOOL  SUMMARY  OUTCOME")
        for row in rows {
            print(
                "\(row.shortID)  \(Self.time(row.createdAt))  \(row.conversationID)  \(row.backend)  \(row.toolName)  \(row.summary.prefix(80))  \(Self.outcome(row))"
            )
        }
    }

    static func outcome(_ row: ApprovalRow) -> String {
        guard let decision = row.decision, let resolvedAt = row.resolvedAt else { return "pending until \(time(row.expiresAt))" }
        switch row.cause {
        case "decided": return "\(decision) by \(row.decidedBy ?? "?") from \(row.decidedFrom ?? "?") at \(time(resolvedAt))"
        case "expired": return "denied: expired at \(time(resolvedAt))"
        default: return "cancelled at \(time(resolvedAt))"
        }
    }

    static func time(_ millis: Int64) -> String { ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(millis) / 1000)) }

    static func json(_ row: ApprovalRow) -> JSONValue {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        return .object([
            "id": .string(row.id), "shortId": .string(row.shortID), "user": .string(row.userID), "conversation": .string(row.conversationID),
            "backend": .string(row.backend), "tool": .string(row.toolName), "summary": .string(row.summary), "createdAt": .int(row.createdAt),
            "expiresAt": .int(row.expiresAt), "decision": text(row.decision), "cause": text(row.cause), "decidedBy": text(row.decidedBy),
            "decidedFrom": text(row.decidedFrom), "device": text(row.deviceID), "resolvedAt": row.resolvedAt.map(JSONValue.int) ?? .null,
        ])
    }
}
