/// How a conversation row should look; the screen maps these to colours and attributes.
public enum RowStyle: Sendable, Equatable {
    case user, pending, assistant, streaming, system, error
    /// A tool use waiting for the user's decision.
    case approval
    /// The "new messages" line.
    case unreadMarker
    /// A row of the line the search found.
    case searchMatch
}

/// One terminal row of the conversation view.
public struct ViewRow: Equatable, Sendable {
    /// At most the view's width in columns (see ``TextWrap``); not padded.
    public var text: String
    public var style: RowStyle
    /// How many leading columns are the gutter (time, sender, separator), which a screen may dim.
    public var gutterColumns: Int
    /// The ``ChatLine/id`` this row shows; `nil` for the unread marker.
    public var lineID: String?

    public init(text: String, style: RowStyle, gutterColumns: Int = 0, lineID: String? = nil) {
        self.text = text
        self.style = style
        self.gutterColumns = gutterColumns
        self.lineID = lineID
    }
}

/// Lays a conversation out as rows for a width: `HH:MM  sender │ text`, wrapped text indented under
/// the separator (below 30 columns: `HH:MM sender` on a row of its own, text below at full width),
/// and the unread marker before the first line after ``ChatBuffer/unreadMarker`` that is not the
/// user's own (their messages, from here or another device, are never news to them).
/// A resize is only a new render.
public struct ConversationRenderer: Sendable {
    public static let labelColumns = 8
    public static let gutterColumns = 6 + labelColumns + 3
    public static let narrowWidth = 30

    public var width: Int
    /// Local time offset for the timestamps.
    public var utcOffsetSeconds: Int
    /// The sender label of assistant lines (the buffer's backend, say).
    public var assistantName: String

    public init(width: Int, utcOffsetSeconds: Int = 0, assistantName: String = "assistant") {
        self.width = max(1, width)
        self.utcOffsetSeconds = utcOffsetSeconds
        self.assistantName = assistantName
    }

    /// Every row of `lines`, top to bottom; rows of the line with id `highlight` get ``RowStyle/searchMatch``.
    public func rows(of lines: [ChatLine], marker: LineOrder?, highlight: String? = nil) -> [ViewRow] {
        var rows: [ViewRow] = []
        var markerPending = marker != nil
        for line in lines {
            if markerPending, let marker, line.order > marker, line.role != .user {
                rows.append(markerRow())
                markerPending = false
            }
            rows += self.rows(of: line, highlighted: line.id == highlight)
        }
        return rows
    }

    /// The rows of one line.
    public func rows(of line: ChatLine, highlighted: Bool = false) -> [ViewRow] {
        rows(line.text, at: line.timestamp, label: label(of: line.role), style: highlighted ? .searchMatch : Self.style(of: line), lineID: line.id)
    }

    /// The rows of an approval waiting in the buffer: what is asked (with its short id), then the
    /// keys that answer it and when it expires, or the answer on its way.
    public func rows(of approval: PendingApproval) -> [ViewRow] {
        let expiry = Self.clock(approval.expiresAt, utcOffsetSeconds: utcOffsetSeconds)
        var text = "\(approval.summary) (\(approval.shortID), expires \(expiry))"
        if let detail = approval.detail, !detail.isEmpty { text += "\n" + detail }
        if let answering = approval.answering {
            text += "\nanswering: \(answering.label)…"
        } else {
            text += "\n" + approval.choices.map { "Alt-\(String($0.key).uppercased()) \($0.shortLabel)" }.joined(separator: " · ")
        }
        return rows(text, at: approval.createdAt, label: "approve?", style: .approval, lineID: "approval-" + approval.id)
    }

    private func rows(_ raw: String, at timestamp: Int64, label: String, style: RowStyle, lineID: String) -> [ViewRow] {
        let time = Self.clock(timestamp, utcOffsetSeconds: utcOffsetSeconds)
        let text = DisplayWidth.sanitized(raw)
        if width < Self.narrowWidth {
            let head = TextWrap.fit(time + " " + label, width: width)
            return [ViewRow(text: head, style: style, gutterColumns: DisplayWidth.of(head), lineID: lineID)]
                + TextWrap.wrap(text, width: width).map { ViewRow(text: $0, style: style, lineID: lineID) }
        }
        let name = TextWrap.fit(label, width: Self.labelColumns)
        let first = time + " " + String(repeating: " ", count: Self.labelColumns - DisplayWidth.of(name)) + name + " │ "
        let next = String(repeating: " ", count: Self.gutterColumns - 2) + "│ "
        return TextWrap.wrap(text, width: width - Self.gutterColumns).enumerated().map { index, row in
            ViewRow(text: (index == 0 ? first : next) + row, style: style, gutterColumns: Self.gutterColumns, lineID: lineID)
        }
    }

    /// The "new messages" row, as wide as the view.
    public func markerRow() -> ViewRow {
        let label = " new messages "
        let left = min(3, max(0, width - DisplayWidth.of(label)))
        let right = max(0, width - left - DisplayWidth.of(label))
        let text = TextWrap.fit(String(repeating: "─", count: left) + label + String(repeating: "─", count: right), width: width)
        return ViewRow(text: text, style: .unreadMarker)
    }

    /// The visible part of `rows`: `height` rows ending `scrollOffset` rows above the last one
    /// (the offset is clamped so the view never scrolls past the first row).
    public static func window(_ rows: [ViewRow], height: Int, scrollOffset: Int) -> ConversationView {
        let height = max(0, height)
        let offset = min(max(0, scrollOffset), max(0, rows.count - height))
        let end = rows.count - offset
        let start = max(0, end - height)
        return ConversationView(rows: Array(rows[start..<end]), totalRows: rows.count, scrollOffset: offset)
    }

    func label(of role: ChatRole) -> String {
        switch role {
        case .user: return "you"
        case .assistant: return assistantName
        case .system: return "--"
        case .error: return "error"
        }
    }

    static func style(of line: ChatLine) -> RowStyle {
        switch (line.role, line.state) {
        case (.user, .pending): return .pending
        case (.user, _): return .user
        case (.assistant, .streaming): return .streaming
        case (.assistant, _): return .assistant
        case (.system, _): return .system
        case (.error, _): return .error
        }
    }

    /// `HH:MM` of Unix milliseconds at a UTC offset.
    public static func clock(_ millis: Int64, utcOffsetSeconds: Int) -> String {
        let seconds = millis / 1000 + Int64(utcOffsetSeconds)
        let ofDay = ((seconds % 86_400) + 86_400) % 86_400
        let (hours, minutes) = (ofDay / 3600, ofDay % 3600 / 60)
        return (hours < 10 ? "0" : "") + "\(hours):" + (minutes < 10 ? "0" : "") + "\(minutes)"
    }
}

/// The rows a conversation pane shows.
public struct ConversationView: Equatable, Sendable {
    /// Top to bottom, at most the pane's height; fewer when the conversation is short (a screen
    /// usually draws them at the bottom of the pane).
    public var rows: [ViewRow]
    public var totalRows: Int
    /// The offset actually used (clamped).
    public var scrollOffset: Int

    public var isAtBottom: Bool { scrollOffset == 0 }
    public var hasMoreAbove: Bool { totalRows - scrollOffset > rows.count }
}
