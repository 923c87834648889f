/// What the state machine asks its caller to do. The caller performs them in order.
public enum ChatEffect: Equatable, Sendable {
    /// `chat.send` `text` to the conversation; `clientID` is the idempotency key, and the message
    /// that comes back should carry it as ``ChatMessage/clientID`` so it replaces the local echo.
    case send(key: String, text: String, clientID: String)
    /// Create a conversation; answer with ``ServerEvent/sessionCreated(_:)``.
    case createConversation(backend: String, title: String?)
    /// Everything up to `seq` in the conversation is read.
    case markRead(key: String, seq: Int64)
    /// `chat.history`; answer with ``ServerEvent/history(key:messages:)``.
    case fetchHistory(key: String, limit: Int)
    /// `chat.abort` the running answer.
    case abort(key: String)
    /// Give the conversation a new title.
    case rename(key: String, title: String)
    /// `sessions.list`; answer with ``ServerEvent/sessionsListed(_:)``.
    case listSessions
    /// Answer with ``ServerEvent/backendsListed(names:defaultBackend:)``.
    case listBackends
    /// The approvals waiting now (`exec.approval.list`, `plugin.approval.list`); answer with
    /// ``ServerEvent/approvalsListed(_:)``.
    case listApprovals
    /// `<kind>.approval.resolve {id, decision}`; a refusal comes back as
    /// ``ServerEvent/approvalAnswerFailed(id:message:)``, the resolution as ``ServerEvent/approvalResolved(_:outcome:)``.
    case resolveApproval(id: String, kind: PendingApproval.Kind, choice: ApprovalChoice)
    /// Ring the terminal bell: a message arrived in a buffer the user is not looking at.
    case bell
    /// Repaint the screen from ``ChatState/screen()``.
    case redraw
    case quit
}
