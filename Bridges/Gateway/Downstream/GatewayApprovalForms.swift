import GatewayWire
import RelayCore

/// Which of OpenClaw's two approval families an approval is shown as: a Bash command is an exec
/// approval (OpenClaw's apps show the command and answer `exec.approval.resolve`), any other tool
/// a plugin approval (a title and a description, answered `plugin.approval.resolve`).
enum GatewayApprovalKind: Equatable {
    case exec
    case plugin

    init(_ approval: Approval) { self = approval.toolName == "Bash" ? .exec : .plugin }

    var requestedEvent: String { self == .exec ? "exec.approval.requested" : "plugin.approval.requested" }
    var resolvedEvent: String { self == .exec ? "exec.approval.resolved" : "plugin.approval.resolved" }
}

/// The core's approvals in OpenClaw's wire forms. The id is the core's own (32 hex digits), so an
/// operator's answer names the same approval `/approve` does; a pure mapping, the session key given.
enum GatewayApprovalForms {
    /// The agent id the relay's gateway has (`hello-ok.snapshot.sessionDefaults.defaultAgentId`).
    static let agentID = "main"

    static func exec(_ approval: Approval, sessionKey: String) -> ExecApprovalRequest {
        let command = approval.summary.isEmpty ? approval.toolName : approval.summary
        var request = ExecApprovalRequest(command: command, allowedDecisions: approval.decisions.map(\.rawValue))
        request.cwd = approval.directory
        request.host = "gateway"
        // The backend asks because the command is not on its allow list: OpenClaw's "on-miss".
        request.security = "allowlist"
        request.ask = "on-miss"
        if !approval.decisions.contains(.allowAlways) { request.unavailableDecisions = [ApprovalDecision.allowAlways.rawValue] }
        request.agentId = agentID
        request.sessionKey = sessionKey
        request.sessionId = approval.conversationID
        request.runId = approval.runID
        request.toolCallId = approval.toolUseID
        return request
    }

    static func plugin(_ approval: Approval, sessionKey: String) -> PluginApprovalRequest {
        let title = bounded("\(approval.agent) wants to use \(approval.toolName)", PluginApprovalRequest.titleLimit)
        let summary = approval.summary.isEmpty ? approval.toolName : approval.summary
        var request = PluginApprovalRequest(
            title: title,
            description: bounded(summary, PluginApprovalRequest.descriptionLimit),
            allowedDecisions: approval.decisions.map(\.rawValue)
        )
        let input = approval.input.encoded()
        if input != "null", input != "{}" { request.detail = bounded(input, PluginApprovalRequest.detailLimit) }
        request.severity = "warning"
        request.toolName = approval.toolName
        request.toolCallId = approval.toolUseID
        request.agentId = agentID
        request.sessionKey = sessionKey
        return request
    }

    /// `exec.approval.requested` or `plugin.approval.requested`'s payload, encoded.
    static func requested(_ approval: Approval, sessionKey: String) -> String {
        switch GatewayApprovalKind(approval) {
        case .exec: GatewayJSON.encode(listed(approval, exec(approval, sessionKey: sessionKey)))
        case .plugin: GatewayJSON.encode(listed(approval, plugin(approval, sessionKey: sessionKey)))
        }
    }

    /// One `*.approval.list` entry (the same shape as the requested event).
    static func listed<Request: Codable & Equatable & Sendable>(_ approval: Approval, _ request: Request) -> ApprovalRequested<Request> {
        ApprovalRequested(id: approval.id, request: request, createdAtMs: approval.createdAt, expiresAtMs: approval.expiresAt)
    }

    /// `exec.approval.resolved` or `plugin.approval.resolved`'s payload, encoded: who decided (by
    /// the name the device is known by), or nobody (`resolvedBy: null`) when it expired or its run
    /// stopped (`cancelled: true`).
    static func resolved(_ approval: Approval, _ resolution: ApprovalResolution, sessionKey: String) -> String {
        switch GatewayApprovalKind(approval) {
        case .exec: GatewayJSON.encode(resolved(approval, resolution, request: exec(approval, sessionKey: sessionKey)))
        case .plugin: GatewayJSON.encode(resolved(approval, resolution, request: plugin(approval, sessionKey: sessionKey)))
        }
    }

    private static func resolved<Request: Codable & Equatable & Sendable>(
        _ approval: Approval,
        _ resolution: ApprovalResolution,
        request: Request
    ) -> ApprovalResolved<Request> {
        let decided = resolution.cause == .decided
        var event = ApprovalResolved(
            id: approval.id,
            decision: resolution.decision.rawValue,
            resolvedBy: decided ? resolution.by.name : nil,
            ts: resolution.at,
            request: request
        )
        switch resolution.cause {
        case .decided: break
        case .expired: event.outcome = .init(message: resolution.summary, severity: "warning")
        case .cancelled: event.cancelled = true
        }
        return event
    }

    /// `exec.approval.get`'s answer.
    static func details(_ approval: Approval) -> ExecApprovalDetails {
        let request = exec(approval, sessionKey: "")
        var details = ExecApprovalDetails(
            id: approval.id,
            commandText: request.command,
            allowedDecisions: request.allowedDecisions,
            expiresAtMs: approval.expiresAt
        )
        details.host = request.host
        details.agentId = agentID
        return details
    }

    /// `text` cut to `limit` UTF-16 units (OpenClaw's schema counts JavaScript string lengths) on a
    /// character boundary, ending with "…" when cut.
    static func bounded(_ text: String, _ limit: Int) -> String {
        guard text.utf16.count > limit else { return text }
        var cut = ""
        var units = 0
        for character in text {
            let size = character.utf16.count
            if units + size > limit - 1 { break }
            cut.append(character)
            units += size
        }
        return cut + "…"
    }
}
