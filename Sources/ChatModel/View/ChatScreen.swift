/// Everything to draw, for one moment: a screen paints the parts into ``layout``'s rectangles and
/// puts the terminal cursor at ``cursorRow``/``cursorColumn``.
public struct ChatScreen: Equatable, Sendable {
    public var layout: ScreenLayout
    /// Conversation, backend and link state, fitted to the width.
    public var title: String
    /// The buffer list, at most the sidebar's height (kept round the active buffer); empty without a sidebar.
    public var sidebar: [SidebarRow]
    public var conversation: ConversationView
    /// Link state, the active buffer, the hotlist and any notice, fitted to the width.
    public var status: [StyledSpan]
    public var input: InputView
    /// Where the terminal cursor goes, in screen coordinates.
    public var cursorRow: Int
    public var cursorColumn: Int
}

/// One row of the buffer list.
public struct SidebarRow: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// A backend name above its buffers.
        case header
        case buffer(number: Int, key: String)
    }

    /// Fitted to the sidebar's width.
    public var text: String
    public var kind: Kind
    public var isActive: Bool
    /// Hotlist level, for colour.
    public var activity: ActivityLevel?
}

/// A piece of the status line.
public struct StyledSpan: Equatable, Sendable {
    public enum Style: Equatable, Sendable {
        case plain
        case connected
        case disconnected
        case activityLow
        case activityMessage
        case notice
    }

    public var text: String
    public var style: Style

    public init(_ text: String, _ style: Style = .plain) {
        self.text = text
        self.style = style
    }

    /// `spans` cut to at most `width` columns, the cut one ending in "…" (a terminal would wrap
    /// a longer status line onto the input line).
    static func fit(_ spans: [StyledSpan], width: Int) -> [StyledSpan] {
        var (out, left) = ([StyledSpan](), width)
        for span in spans {
            let columns = DisplayWidth.of(span.text)
            guard columns > left else {
                out.append(span)
                left -= columns
                continue
            }
            if left > 0 { out.append(StyledSpan(TextWrap.fit(span.text, width: left), span.style)) }
            break
        }
        return out
    }
}

extension SidebarRow {
    /// The buffer list rows: a header per backend (``SidebarRow/Kind/header``; "other" for buffers
    /// without one), then `N name (unread)` per buffer.
    static func rows(_ buffers: BufferList, active: String?, hotlist: Hotlist, width: Int) -> [SidebarRow] {
        var rows: [SidebarRow] = []
        for group in buffers.groups {
            rows.append(SidebarRow(text: TextWrap.fit(group.backend ?? "other", width: width), kind: .header, isActive: false, activity: nil))
            for (number, buffer) in group.buffers {
                let unread = buffer.unreadCount > 0 && buffer.key != active ? " (\(buffer.unreadCount))" : ""
                let name = TextWrap.fit("\(number) \(DisplayWidth.singleLine(buffer.displayName))", width: max(1, width - DisplayWidth.of(unread)))
                rows.append(
                    SidebarRow(
                        text: TextWrap.fit(name + unread, width: width),
                        kind: .buffer(number: number, key: buffer.key),
                        isActive: buffer.key == active,
                        activity: hotlist.level(of: buffer.key)
                    )
                )
            }
        }
        return rows
    }

    /// At most `height` rows, keeping the active buffer in view.
    static func window(_ rows: [SidebarRow], height: Int) -> [SidebarRow] {
        guard rows.count > height else { return rows }
        guard height > 0 else { return [] }
        let active = rows.firstIndex { $0.isActive } ?? 0
        let start = max(0, min(active - height / 2, rows.count - height))
        return Array(rows[start..<(start + height)])
    }
}
