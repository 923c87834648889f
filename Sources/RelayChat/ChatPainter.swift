import ChatModel

/// A `ChatScreen` as terminal placements: each part in its rectangle, already cut to width by the model.
enum ChatPainter {
    static func paint(_ screen: ChatScreen, on terminal: Terminal) {
        terminal.draw(placements(screen), cursor: (screen.cursorRow, screen.cursorColumn))
    }

    static func placements(_ screen: ChatScreen) -> [Terminal.Placement] {
        let layout = screen.layout
        var out: [Terminal.Placement] = []
        func bar(_ rect: ScreenRect, _ spans: [Terminal.Span], style: Terminal.Style) {
            let used = spans.reduce(0) { $0 + DisplayWidth.of($1.text) }
            out.append(
                Terminal.Placement(
                    row: rect.row,
                    column: rect.column,
                    spans: spans + [Terminal.Span(String(repeating: " ", count: max(0, rect.width - used)), style)]
                )
            )
        }
        bar(layout.title, [Terminal.Span(screen.title, .title)], style: .title)
        if let sidebar = layout.sidebar {
            for (index, row) in screen.sidebar.prefix(sidebar.height).enumerated() {
                let style: Terminal.Style = row.isActive ? .active : row.kind == .header ? .bold : row.activity != nil ? .unread : .normal
                out.append(Terminal.Placement(row: sidebar.row + index, column: sidebar.column, spans: [Terminal.Span(row.text, style)]))
            }
        }
        let pane = layout.conversation
        let rows = screen.conversation.rows.suffix(pane.height)
        for (index, row) in rows.enumerated() {
            out.append(
                Terminal.Placement(
                    row: pane.row + pane.height - rows.count + index,
                    column: pane.column,
                    spans: [Terminal.Span(row.text, style(row.style))]
                )
            )
        }
        bar(layout.status, screen.status.map { Terminal.Span($0.text, style($0.style)) }, style: .status)
        for (index, text) in screen.input.rows.prefix(layout.input.height).enumerated() {
            out.append(Terminal.Placement(row: layout.input.row + index, column: layout.input.column, spans: [Terminal.Span(text, .input)]))
        }
        return out
    }

    private static func style(_ style: RowStyle) -> Terminal.Style {
        switch style {
        case .user: .user
        case .pending: .dim
        case .assistant, .streaming: .assistant
        case .system: .system
        case .error: .error
        case .unreadMarker: .marker
        case .searchMatch: .active
        case .approval: .unread
        }
    }

    private static func style(_ style: StyledSpan.Style) -> Terminal.Style {
        switch style {
        case .plain: .status
        case .connected: .status
        case .disconnected: .error
        case .activityLow: .status
        case .activityMessage: .unread
        case .notice: .system
        }
    }
}
