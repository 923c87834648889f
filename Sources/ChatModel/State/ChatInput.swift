/// What the client state machine reacts to: keys from the terminal, the terminal's size, and
/// events from the gateway connection.
public enum ChatInput: Equatable, Sendable {
    case key(Key)
    /// The whole terminal, in columns and rows.
    case resize(columns: Int, rows: Int)
    case server(ServerEvent)
}

/// An event from the gateway connection, already decoded from the wire.
public enum ServerEvent: Equatable, Sendable {
    case connection(ConnectionState)
    /// The conversations (`sessions.list`); the first list decides the initial buffers and order.
    case sessionsListed([SessionSummary])
    /// A conversation this client asked for with ``ChatEffect/createConversation(backend:title:)``
    /// exists: it is opened and becomes the active buffer.
    case sessionCreated(SessionSummary)
    /// Some fields of a conversation changed (another device read it, it got a title, …).
    case sessionChanged(SessionUpdate)
    /// A page of a conversation's history (``ChatEffect/fetchHistory(key:limit:)``, or after a reconnect).
    case history(key: String, messages: [ChatMessage])
    /// A new message (a user message from any device, an answer that did not stream, a notice).
    case message(key: String, ChatMessage)
    /// An answer being written: the whole text so far, under the id its final message will have.
    case streaming(key: String, id: String, text: String)
    /// The finished answer; replaces the streaming entry with the same id.
    case final(key: String, ChatMessage)
    /// An error for one conversation (its running answer stops), or for none (`key` nil).
    case error(key: String?, message: String)
    /// The backends, and the one `/new` uses when none is named.
    case backendsListed(names: [String], defaultBackend: String?)
    /// A tool use waits for the user's decision: shown in its conversation's buffer until resolved.
    case approvalRequested(PendingApproval)
    /// It was decided (here or anywhere), expired, or its run stopped; `outcome` says which, for
    /// people ("denied by Ann's iPhone").
    case approvalResolved(PendingApproval, outcome: String)
    /// Every approval waiting now (``ChatEffect/listApprovals``, after each connect).
    case approvalsListed([PendingApproval])
    /// An answer (``ChatEffect/resolveApproval(id:kind:choice:)``) was refused.
    case approvalAnswerFailed(id: String, message: String)
}

/// The gateway link as the status line shows it.
public enum ConnectionState: Equatable, Sendable, CustomStringConvertible {
    case connecting
    case connected
    /// Waiting to reconnect; `retryInMillis` if known.
    case disconnected(reason: String?, retryInMillis: Int?)
    /// Refused for good (the device was revoked): no more tries; `reason` is said in the active buffer.
    case refused(reason: String)

    public var description: String {
        switch self {
        case .connecting: return "connecting"
        case .connected: return "connected"
        case .refused: return "refused"
        case .disconnected(let reason, let retry):
            let retryText = retry.map { ", retry in \(($0 + 999) / 1000) s" } ?? ""
            return "disconnected" + (reason.map { ": \($0)" } ?? "") + retryText
        }
    }
}

/// A conversation as listed by the server. Leave out (`nil`) what the server does not know, rather
/// than sending 0: an unread count of 0 means "read elsewhere".
public struct SessionSummary: Equatable, Sendable {
    /// The session key messages are sent to.
    public var key: String
    public var displayName: String?
    public var backend: String?
    public var unreadCount: Int?
    public var lastReadSeq: Int64?
    /// Unix milliseconds.
    public var updatedAt: Int64
    public var preview: String?

    public init(
        key: String,
        displayName: String? = nil,
        backend: String? = nil,
        unreadCount: Int? = nil,
        lastReadSeq: Int64? = nil,
        updatedAt: Int64 = 0,
        preview: String? = nil
    ) {
        self.key = key
        self.displayName = displayName
        self.backend = backend
        self.unreadCount = unreadCount
        self.lastReadSeq = lastReadSeq
        self.updatedAt = updatedAt
        self.preview = preview
    }
}

/// The fields of a conversation that changed; `nil` means unchanged.
public struct SessionUpdate: Equatable, Sendable {
    public var key: String
    public var displayName: String?
    public var backend: String?
    public var unreadCount: Int?
    public var lastReadSeq: Int64?
    public var updatedAt: Int64?
    public var preview: String?

    public init(
        key: String,
        displayName: String? = nil,
        backend: String? = nil,
        unreadCount: Int? = nil,
        lastReadSeq: Int64? = nil,
        updatedAt: Int64? = nil,
        preview: String? = nil
    ) {
        self.key = key
        self.displayName = displayName
        self.backend = backend
        self.unreadCount = unreadCount
        self.lastReadSeq = lastReadSeq
        self.updatedAt = updatedAt
        self.preview = preview
    }
}
