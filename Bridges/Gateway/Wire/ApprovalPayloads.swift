import RelayKit

/// `exec.approval.requested`'s `request`: a command waiting for an operator's decision, as
/// OpenClaw's gateway writes it (`src/gateway/server-methods/exec-approval.ts`; the params it is
/// made from: `ExecApprovalRequestParamsSchema` in `packages/gateway-protocol/src/schema/
/// exec-approvals.ts`). Fields OpenClaw writes as `null` when it has no value are written so here.
public struct ExecApprovalRequest: Codable, Equatable, Sendable {
    /// The command as the reviewer reads it (never empty: apps drop a request without one).
    public var command: String
    @ExplicitNull public var cwd: String?
    @ExplicitNull public var nodeId: String?
    /// Where it runs: `gateway` (the relay's host), as OpenClaw names its own host.
    @ExplicitNull public var host: String?
    /// `deny | allowlist | full`.
    @ExplicitNull public var security: String?
    /// `off | on-miss | always` (`always` makes `allow-always` unavailable in OpenClaw's apps).
    @ExplicitNull public var ask: String?
    /// `["allow-always"]` when that decision is not offered.
    public var unavailableDecisions: [String]?
    /// What `exec.approval.resolve` takes: a subset of `allow-once`, `allow-always`, `deny`.
    public var allowedDecisions: [String]
    @ExplicitNull public var agentId: String?
    @ExplicitNull public var resolvedPath: String?
    @ExplicitNull public var sessionKey: String?
    @ExplicitNull public var sessionId: String?
    /// The run that waits (the `chat.send` idempotency key), as in the `agent` and `chat` events.
    @ExplicitNull public var runId: String?
    /// The tool call the `agent` event's `tool` stream names.
    @ExplicitNull public var toolCallId: String?

    public init(command: String, allowedDecisions: [String]) {
        self.command = command
        self.allowedDecisions = allowedDecisions
    }
}

/// `plugin.approval.requested`'s `request`: any other tool use waiting for a decision
/// (`PluginApprovalRequestParamsSchema` in `packages/gateway-protocol/src/schema/plugin-approvals.ts`:
/// `title` at most 80 characters, `description` at most 512, `detail` at most 16384).
public struct PluginApprovalRequest: Codable, Equatable, Sendable {
    public static let titleLimit = 80
    public static let descriptionLimit = 512
    public static let detailLimit = 16_384

    @ExplicitNull public var pluginId: String?
    public var title: String
    public var description: String
    /// Shown on the reviewing surface only (the tool's input here).
    public var detail: String?
    /// `info | warning | critical`.
    @ExplicitNull public var severity: String?
    @ExplicitNull public var toolName: String?
    @ExplicitNull public var toolCallId: String?
    public var allowedDecisions: [String]
    @ExplicitNull public var agentId: String?
    @ExplicitNull public var sessionKey: String?

    public init(title: String, description: String, allowedDecisions: [String]) {
        self.title = title
        self.description = description
        self.allowedDecisions = allowedDecisions
    }
}

/// `exec.approval.requested` / `plugin.approval.requested`, and one entry of `exec.approval.list`
/// / `plugin.approval.list`: `{id, request, createdAtMs, expiresAtMs}` (OpenClaw's apps require
/// all four).
public struct ApprovalRequested<Request: Codable & Equatable & Sendable>: Codable, Equatable, Sendable {
    public var id: String
    public var request: Request
    public var createdAtMs: Int64
    public var expiresAtMs: Int64

    public init(id: String, request: Request, createdAtMs: Int64, expiresAtMs: Int64) {
        self.id = id
        self.request = request
        self.createdAtMs = createdAtMs
        self.expiresAtMs = expiresAtMs
    }
}

/// `exec.approval.resolved` / `plugin.approval.resolved` (`ResolvedApprovalEvent` in OpenClaw's
/// `src/gateway/server-methods/approval-shared.ts`): `resolvedBy` is `null` when nobody decided
/// (it expired, or its run stopped: `cancelled`), and `decision` is then the deny it fails closed to.
public struct ApprovalResolved<Request: Codable & Equatable & Sendable>: Codable, Equatable, Sendable {
    /// Why a relay-made decision was made, for the reviewer (`{message, severity: info | warning}`).
    public struct Outcome: Codable, Equatable, Sendable {
        public var message: String
        public var severity: String

        public init(message: String, severity: String) {
            self.message = message
            self.severity = severity
        }
    }

    public var id: String
    public var decision: String
    @ExplicitNull public var resolvedBy: String?
    public var ts: Int64
    public var request: Request
    public var outcome: Outcome?
    /// Written only as `true`.
    public var cancelled: Bool?

    public init(id: String, decision: String, resolvedBy: String?, ts: Int64, request: Request) {
        self.id = id
        self.decision = decision
        self.resolvedBy = resolvedBy
        self.ts = ts
        self.request = request
    }
}

/// `exec.approval.resolve` / `plugin.approval.resolve {id, decision}`.
public struct ApprovalResolveParams: Codable, Equatable, Sendable {
    public var id: String?
    public var decision: String?

    public init(id: String, decision: String) {
        self.id = id
        self.decision = decision
    }
}

/// `exec.approval.get {id}`.
public struct ApprovalGetParams: Codable, Equatable, Sendable {
    public var id: String?

    public init(id: String) { self.id = id }
}

/// `exec.approval.get`'s answer: the pending command as a reviewer shows it.
public struct ExecApprovalDetails: Codable, Equatable, Sendable {
    public var id: String
    public var commandText: String
    public var allowedDecisions: [String]
    @ExplicitNull public var host: String?
    @ExplicitNull public var nodeId: String?
    @ExplicitNull public var agentId: String?
    public var expiresAtMs: Int64

    public init(id: String, commandText: String, allowedDecisions: [String], expiresAtMs: Int64) {
        self.id = id
        self.commandText = commandText
        self.allowedDecisions = allowedDecisions
        self.expiresAtMs = expiresAtMs
    }
}

/// `{ok: true}`: what a resolve answers.
public struct OkResult: Codable, Equatable, Sendable {
    public var ok = true

    public init() {}
}
