/// One conversation as the client shows it.
public struct ChatBuffer: Sendable, Equatable {
    /// Whether the buffer holds what the server has.
    public enum HistoryState: Sendable, Equatable {
        case notLoaded
        case loading
        case loaded
        /// Loaded before a reconnect: reload when entered.
        case stale
    }

    public let key: String
    public var displayName: String
    /// The backend answering in this conversation; `nil` when the server did not say.
    public var backend: String?
    /// Unread messages, as the server counts them (raised here as messages arrive).
    public var unreadCount: Int
    /// The newest seq marked read, here or elsewhere.
    public var lastReadSeq: Int64?
    /// Unix milliseconds of the last activity.
    public var updatedAt: Int64
    public var preview: String?
    public var transcript = Transcript()
    /// Lines after this order are new: the "new messages" marker sits before the first of them that
    /// is not a user message.
    /// `nil`: no marker.
    public var unreadMarker: LineOrder?
    /// Rows scrolled up from the bottom; 0 shows the newest line.
    public var scrollOffset = 0
    /// This buffer's input line, draft and input history.
    public var editor = LineEditor()
    public var historyState = HistoryState.notLoaded
    /// The history limit asked for last.
    public var historyLimit = 0
    /// The seq last sent in a markRead, so one seq is marked once.
    var markedReadSeq: Int64?

    public init(session: SessionSummary) {
        key = session.key
        displayName = session.displayName ?? session.key
        backend = session.backend
        unreadCount = session.unreadCount ?? 0
        lastReadSeq = session.lastReadSeq
        updatedAt = session.updatedAt
        preview = session.preview
    }

    public var lines: [ChatLine] { transcript.lines }

    /// Whether lines after the marker exist, so it is drawn.
    public var showsUnreadMarker: Bool {
        guard let marker = unreadMarker else { return false }
        return lines.contains { $0.order > marker && $0.role != .user }
    }

    /// Puts the marker after the last line that has its place (everything there is now read; an answer
    /// still streaming or a message not yet confirmed will move when it gets its seq, so it counts as new).
    mutating func moveMarkerToEnd() {
        unreadMarker = lines.last { $0.order.seq != .max }?.order ?? (lines.isEmpty ? nil : .start)
    }

    /// Sets the marker before the line with `id` if there is none (a marker left behind when the user
    /// left the buffer already sits before everything that came since): after the line before it, or
    /// when it is the first line here (history not loaded), just before its seq, or after the last seq read.
    mutating func markArrival(of id: String) {
        guard unreadMarker == nil, let index = transcript.index(ofID: id) else { return }
        if index > 0 {
            unreadMarker = lines[index - 1].order
        } else if let seq = lines[index].seq {
            unreadMarker = LineOrder(seq: seq, local: -1)
        } else {
            unreadMarker = lastReadSeq.map { LineOrder(seq: $0, local: .max) } ?? .start
        }
    }
}
