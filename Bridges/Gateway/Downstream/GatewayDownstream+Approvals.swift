import GatewayWire
import RelayCore

/// Tool approvals for OpenClaw operators (`operator.approvals`, or admin): every approval of the
/// gateway's user is announced as OpenClaw's `exec.approval.requested` (a Bash command) or
/// `plugin.approval.requested` (any other tool) and, however it ends (a decision from any device
/// of any protocol, expiry, its run stopping), as the matching `*.resolved`. Operators decide
/// through `exec.approval.resolve` / `plugin.approval.resolve` (the core's first decision wins)
/// and catch up after a reconnect with `exec.approval.list`, `plugin.approval.list` and
/// `exec.approval.get`. Errors as OpenClaw's `approval-shared.ts` gives them.
extension GatewayDownstream {
    /// The longest approval id or prefix read (the core's ids have 32 characters).
    static let approvalIDLimit = 256

    /// An approval asked or resolved (`hub.approvals.observe`): to every operator that reviews them.
    func approvalChanged(_ update: ApprovalUpdate) {
        let approval = update.approval
        guard approval.userID == settings.userID else { return }
        let kind = GatewayApprovalKind(approval)
        let key = sessionKey(of: approval.conversationID)
        switch update {
        case .requested:
            broadcast(kind.requestedEvent, payloadJSON: GatewayApprovalForms.requested(approval, sessionKey: key), to: \.reviewsApprovals)
        case .resolved(_, let resolution):
            broadcast(kind.resolvedEvent, payloadJSON: GatewayApprovalForms.resolved(approval, resolution, sessionKey: key), to: \.reviewsApprovals)
        }
    }

    func handleApprovals(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        switch request.method {
        case "exec.approval.list": listApprovals(.exec, request.id, on: socket)
        case "plugin.approval.list": listApprovals(.plugin, request.id, on: socket)
        case "exec.approval.get": getApproval(request, on: socket)
        case "exec.approval.resolve": resolveApproval(request, kind: .exec, on: socket)
        default: resolveApproval(request, kind: .plugin, on: socket)
        }
    }

    /// The user's pending approvals of one kind, oldest first, each as its requested event.
    private func listApprovals(_ kind: GatewayApprovalKind, _ requestID: String, on socket: GatewaySocket) {
        let pending = hub.approvals.pending(userID: settings.userID).filter { GatewayApprovalKind($0) == kind }
        switch kind {
        case .exec:
            socket.reply(
                requestID,
                pending.map { GatewayApprovalForms.listed($0, GatewayApprovalForms.exec($0, sessionKey: sessionKey(of: $0.conversationID))) }
            )
        case .plugin:
            socket.reply(
                requestID,
                pending.map { GatewayApprovalForms.listed($0, GatewayApprovalForms.plugin($0, sessionKey: sessionKey(of: $0.conversationID))) }
            )
        }
    }

    private func getApproval(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        guard let id = request.params(as: ApprovalGetParams.self)?.id, !id.isEmpty else { return socket.fail(request.id, .approvalIDRequired) }
        switch pendingApproval(id, kind: .exec) {
        case .success(let approval): socket.reply(request.id, GatewayApprovalForms.details(approval))
        case .failure(.ambiguous): socket.fail(request.id, .approvalAmbiguous)
        case .failure: socket.fail(request.id, .approvalNotFound)
        }
    }

    /// Decides for the socket's device; the broadcast of the resolution comes from the core's update.
    private func resolveApproval(_ request: GatewayRequest<JSONValue>, kind: GatewayApprovalKind, on socket: GatewaySocket) {
        guard let params = request.params(as: ApprovalResolveParams.self), let id = params.id, !id.isEmpty, let raw = params.decision else {
            return socket.fail(request.id, .approvalParamsRequired)
        }
        guard let decision = ApprovalDecision(rawValue: raw) else { return socket.fail(request.id, .invalidDecision) }
        let approval: Approval
        switch pendingApproval(id, kind: kind) {
        case .success(let found): approval = found
        case .failure(let refusal): return answer(refusal, to: request.id, deciding: decision, kind: kind, on: socket)
        }
        hub.approvals.decide(approval.id, userID: settings.userID, decision: decision, deviceID: socket.deviceID) { [weak self] result in
            switch result {
            case .success: socket.reply(request.id, OkResult())
            case .failure(let refusal): self?.answer(refusal, to: request.id, deciding: decision, kind: kind, on: socket)
            }
        }
    }

    /// The user's pending approval of `kind` that `id` names (its full id or a unique prefix); one
    /// of another kind is not found (OpenClaw keeps exec and plugin approvals apart).
    private func pendingApproval(_ id: String, kind: GatewayApprovalKind) -> Result<Approval, ApprovalRefusal> {
        guard id.utf8.count <= Self.approvalIDLimit else { return .failure(.notFound(id)) }
        switch hub.approvals.find(id, userID: settings.userID) {
        case .success(let approval) where GatewayApprovalKind(approval) != kind: return .failure(.notFound(id))
        case let found: return found
        }
    }

    /// A refused decision in OpenClaw's terms. A decision equal to the one that won is a retry and
    /// answered `{ok: true}`; a different one is `APPROVAL_ALREADY_RESOLVED`; an approval that
    /// expired or whose run stopped is gone (`APPROVAL_NOT_FOUND`).
    private func answer(
        _ refusal: ApprovalRefusal,
        to requestID: String,
        deciding decision: ApprovalDecision,
        kind: GatewayApprovalKind,
        on socket: GatewaySocket
    ) {
        switch refusal {
        case .resolved(let approval, let resolution) where resolution.cause == .decided && GatewayApprovalKind(approval) == kind:
            if resolution.decision == decision { return socket.reply(requestID, OkResult()) }
            socket.fail(requestID, .approvalAlreadyResolved)
        case .ambiguous: socket.fail(requestID, .approvalAmbiguous)
        case .notOffered(let offered): socket.fail(requestID, .decisionUnavailable(offered.rawValue))
        case .notFound, .tooShort, .resolved: socket.fail(requestID, .approvalNotFound)
        }
    }
}
