import RelayCore

/// Pushes to OpenClaw apps: answers in the neutral form; approvals as OpenClaw's own gateway sends
/// them (gateway-parity.md §4): an alert with category `openclaw.exec-approval` (Bash) or
/// `openclaw.plugin-approval` (other tools) and `openclaw: {kind, approvalId, gatewayDeviceId, ts}`,
/// on which the app opens its prompt and calls `exec.approval.get`; resolved, a silent push with
/// kind `….resolved` that makes the app withdraw the alert.
enum GatewayPush {
    static func content(gatewayDeviceID: String?) -> Pushes.Formatter {
        { notice, settings in
            let push = notice.push
            guard let approval = push.approval, push.kind != .answer else { return Pushes.neutral(notice, settings) }
            let family = approval.toolName == "Bash" ? "exec" : "plugin"
            let state = push.kind == .approvalRequested ? "requested" : "resolved"
            var fields: [String: JSONValue] = [
                "kind": .string("\(family).approval.\(state)"), "approvalId": .string(approval.id), "ts": .int(push.createdAt),
            ]
            if let gatewayDeviceID { fields["gatewayDeviceId"] = .string(gatewayDeviceID) }
            let custom: [String: JSONValue] = ["openclaw": .object(fields)]
            guard push.kind == .approvalRequested else {
                return PushContent(title: "", body: "", threadID: push.conversationID, custom: custom, silent: true)
            }
            let (title, body) =
                family == "exec"
                ? ("Exec approval required", "Open OpenClaw to review this request.")
                : (
                    "\(approval.agent) wants to use \(approval.toolName)",
                    approval.summary.isEmpty ? "Open OpenClaw to review this request." : approval.summary
                )
            var content = PushContent(
                title: title,
                body: String(body.prefix(200)),
                threadID: push.conversationID,
                custom: custom,
                category: "openclaw.\(family)-approval"
            )
            content.wakesApp = true
            return content
        }
    }
}
