import ChatModel
import GatewayWire
import RelayKit

/// The gateway's approval frames as the chat model's approvals: `exec.approval.*` and
/// `plugin.approval.*` events, and the entries of `exec.approval.list` / `plugin.approval.list`.
enum GatewayApprovals {
    /// The family an event name belongs to.
    static func kind(of event: String) -> PendingApproval.Kind { event.hasPrefix("plugin.") ? .plugin : .exec }

    /// A requested event's payload or a list entry `{id, request, createdAtMs, expiresAtMs}`; a
    /// resolved event's payload (it has `ts` where the others have `createdAtMs`) reads too.
    static func approval(_ value: JSONValue, kind: PendingApproval.Kind) -> PendingApproval? {
        guard let id = value["id"]?.stringValue, !id.isEmpty, let request = value["request"] else { return nil }
        let created = value["createdAtMs"]?.intValue ?? value["ts"]?.intValue ?? 0
        let choices = request["allowedDecisions"]?.arrayValue?.compactMap { $0.stringValue.flatMap(ApprovalChoice.init(rawValue:)) }
        var approval = PendingApproval(
            id: id,
            kind: kind,
            key: request["sessionKey"]?.stringValue,
            summary: "",
            choices: choices ?? ApprovalChoice.allCases,
            createdAt: created,
            expiresAt: value["expiresAtMs"]?.intValue ?? created
        )
        switch kind {
        case .exec:
            approval.summary = "run `\(request["command"]?.stringValue ?? "?")`"
            approval.detail = request["cwd"]?.stringValue.map { "in \($0)" }
        case .plugin:
            approval.summary = request["title"]?.stringValue ?? "a tool wants to run"
            approval.detail = request["description"]?.stringValue
        }
        return approval
    }

    /// A `*.approval.list` answer (an array of entries).
    static func list(_ value: JSONValue, kind: PendingApproval.Kind) -> [PendingApproval] {
        (value.arrayValue ?? []).compactMap { approval($0, kind: kind) }
    }

    /// How a resolved event says it ended, for people.
    static func outcome(_ value: JSONValue) -> String {
        if value["cancelled"] == .bool(true) { return "cancelled: the run no longer waits for it" }
        let decision = value["decision"]?.stringValue ?? "deny"
        guard let by = value["resolvedBy"]?.stringValue else {
            return value["outcome"]?["message"]?.stringValue ?? (decision == "deny" ? "denied (nobody decided)" : decision)
        }
        switch decision {
        case "allow-once": return "allowed once by \(by)"
        case "allow-always": return "always allowed (for this session) by \(by)"
        default: return "denied by \(by)"
        }
    }
}
