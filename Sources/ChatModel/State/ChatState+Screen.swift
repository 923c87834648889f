/// The picture of the state: what ``ChatScreen`` holds.
extension ChatState {
    /// The screen for the current terminal size (80×24 until a resize says otherwise).
    public func screen() -> ChatScreen {
        let size = terminalSize ?? (80, 24)
        let layout = layout(columns: size.columns, rows: size.rows)
        let input = inputView(width: layout.input.width, height: layout.input.height)
        let conversation =
            activeBuffer.map {
                ConversationRenderer.window(conversationRows(of: $0), height: layout.conversation.height, scrollOffset: $0.scrollOffset)
            } ?? ConversationView(rows: [], totalRows: 0, scrollOffset: 0)
        let sidebar =
            layout.sidebar.map {
                SidebarRow.window(SidebarRow.rows(buffers, active: activeKey, hotlist: hotlist, width: $0.width), height: $0.height)
            } ?? []
        return ChatScreen(
            layout: layout,
            title: TextWrap.fit(DisplayWidth.singleLine(titleText), width: layout.title.width),
            sidebar: sidebar,
            conversation: conversation,
            status: StyledSpan.fit(statusSpans(conversation), width: layout.status.width),
            input: input,
            cursorRow: layout.input.row + input.cursorRow,
            cursorColumn: input.cursorColumn
        )
    }

    /// The layout at the current terminal size; `nil` before the first resize.
    func layout() -> ScreenLayout? {
        terminalSize.map { layout(columns: $0.columns, rows: $0.rows) }
    }

    private func layout(columns: Int, rows: Int) -> ScreenLayout {
        ScreenLayout.compute(columns: columns, rows: rows, inputRows: inputView(width: max(1, columns), height: nil).totalRows)
    }

    /// The input area: the editor, or the search query, or the digits after Alt-J.
    func inputView(width: Int, height: Int?) -> InputView {
        if let search {
            let prompt = search.failed ? "(failing search) " : "(search) "
            let query = Array(search.query)
            return InputView.render(query, cursor: query.count, prompt: prompt, width: width, height: height)
        }
        if let jumpDigits {
            return InputView.render(Array(jumpDigits), cursor: jumpDigits.count, prompt: "jump to buffer: ", width: width, height: height)
        }
        let editor = self.editor
        return InputView.render(editor.characters, cursor: editor.cursor, prompt: "> ", width: width, height: height)
    }

    var titleText: String {
        guard let buffer = activeBuffer else { return "clawrelay chat — \(connection)" }
        return "\(DisplayWidth.singleLine(buffer.displayName)) — \(buffer.backend ?? "?") — \(connection)"
    }

    /// `[link] [N:name] [more ↓] [Act: 2:foo(3) 5:bar] notice`
    func statusSpans(_ conversation: ConversationView) -> [StyledSpan] {
        var spans = [StyledSpan("[\(DisplayWidth.singleLine(connection.description))]", connection == .connected ? .connected : .disconnected)]
        if let key = activeKey, let buffer = activeBuffer, let number = buffers.number(of: key) {
            spans.append(StyledSpan(" [\(number):\(DisplayWidth.singleLine(buffer.displayName))]"))
        }
        if !conversation.isAtBottom { spans.append(StyledSpan(" [more ↓]")) }
        if !hotlist.entries.isEmpty {
            spans.append(StyledSpan(" [Act:"))
            for entry in hotlist.entries {
                guard let number = buffers.number(of: entry.key), let buffer = buffers[entry.key] else { continue }
                let unread = buffer.unreadCount > 0 ? "(\(buffer.unreadCount))" : ""
                spans.append(
                    StyledSpan(
                        " \(number):\(DisplayWidth.singleLine(buffer.displayName))\(unread)",
                        entry.level == .message ? .activityMessage : .activityLow
                    )
                )
            }
            spans.append(StyledSpan("]"))
        }
        if let notice { spans.append(StyledSpan(" " + DisplayWidth.singleLine(notice), .notice)) }
        return spans
    }
}
