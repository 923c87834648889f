/// Who a line is from.
public enum ChatRole: String, Sendable, Equatable, CaseIterable {
    case user, assistant, system, error
}

/// A message as the server reports it (live, final, or in a history page).
public struct ChatMessage: Equatable, Sendable {
    /// Stable across reloads: a final answer has the id its streaming updates had.
    public var id: String
    /// The conversation's sequence number; `nil` if the server gave none (the line then stays at the bottom).
    public var seq: Int64?
    public var role: ChatRole
    public var text: String
    /// Unix milliseconds.
    public var timestamp: Int64
    /// The id this client gave the message when sending it (``ChatEffect/send(key:text:clientID:)``),
    /// so the server's copy replaces the local echo.
    public var clientID: String?

    public init(id: String, seq: Int64?, role: ChatRole, text: String, timestamp: Int64, clientID: String? = nil) {
        self.id = id
        self.seq = seq
        self.role = role
        self.text = text
        self.timestamp = timestamp
        self.clientID = clientID
    }
}

/// Where a line sits in a transcript: server lines by seq; lines made here (notices, command output)
/// right after the newest seq at the time they were added; lines still waiting for a seq (an answer
/// streaming in, a message being sent) at the bottom, in the order they came.
public struct LineOrder: Comparable, Hashable, Sendable {
    public var seq: Int64
    public var local: Int

    public init(seq: Int64, local: Int) {
        self.seq = seq
        self.local = local
    }

    /// Before every line.
    public static let start = LineOrder(seq: .min, local: 0)

    public static func < (lhs: LineOrder, rhs: LineOrder) -> Bool {
        (lhs.seq, lhs.local) < (rhs.seq, rhs.local)
    }
}

/// One entry of a conversation view.
public struct ChatLine: Equatable, Sendable {
    public enum State: Equatable, Sendable {
        /// A server message with its final text.
        case final
        /// An answer still growing.
        case streaming
        /// An answer that was streaming when the connection dropped; a history reload replaces or removes it.
        case interrupted
        /// Sent from here, not yet confirmed by the server.
        case pending
        /// Made by the client (command output, notices); never sent anywhere.
        case local
    }

    public var id: String
    public var seq: Int64?
    public var role: ChatRole
    public var text: String
    public var timestamp: Int64
    public var state: State
    public var order: LineOrder

    public init(id: String, seq: Int64?, role: ChatRole, text: String, timestamp: Int64, state: State, order: LineOrder) {
        self.id = id
        self.seq = seq
        self.role = role
        self.text = text
        self.timestamp = timestamp
        self.state = state
        self.order = order
    }

    public var isStreaming: Bool { state == .streaming }
}
