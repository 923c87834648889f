/// Reading: what the active buffer shows, and marking it read.
extension ChatState {
    /// Emits ``ChatEffect/markRead(key:seq:)`` when the active buffer shows its newest line and that
    /// line's seq is unread (or the server still counts unread messages) — once per seq.
    mutating func markActiveRead() {
        guard let key = activeKey, let buffer = activeBuffer, let newest = buffer.transcript.newestSeq, buffer.markedReadSeq != newest,
            newest > (buffer.lastReadSeq ?? .min) || buffer.unreadCount > 0, showsNewestLine(buffer)
        else { return }
        buffers.update(key) { buffer in
            buffer.lastReadSeq = max(buffer.lastReadSeq ?? newest, newest)
            buffer.unreadCount = 0
            buffer.markedReadSeq = newest
        }
        hotlist.remove(key)
        effects.append(.markRead(key: key, seq: newest))
        needsRedraw = true
    }

    private func showsNewestLine(_ buffer: ChatBuffer) -> Bool {
        guard let height = conversationHeight, height > 0 else { return false }
        guard buffer.scrollOffset > 0 else { return true }
        return conversationRows(of: buffer).count <= height
    }

    /// The conversation pane's height, once the terminal's size is known.
    var conversationHeight: Int? { layout().map(\.conversation.height) }

    /// Every row of a buffer at the current width (with the search match highlighted).
    func conversationRows(of buffer: ChatBuffer) -> [ViewRow] {
        let width = layout()?.conversation.width ?? 80
        let renderer = ConversationRenderer(
            width: width,
            utcOffsetSeconds: configuration.utcOffsetSeconds,
            assistantName: buffer.backend ?? "assistant"
        )
        let highlight = buffer.key == activeKey ? search?.matchID : nil
        return renderer.rows(of: buffer.lines, marker: buffer.unreadMarker, highlight: highlight)
            + approvals(shownIn: buffer.key).flatMap { renderer.rows(of: $0) }
    }

    /// Runs `body` on a buffer; if it is the active one and scrolled up, moves the offset by the rows
    /// added so what the user reads stays in place.
    @discardableResult
    mutating func preservingScroll<Result>(of key: String, _ body: (inout ChatBuffer) -> Result) -> Result? {
        guard key == activeKey, let buffer = buffers[key], buffer.scrollOffset > 0 else { return buffers.update(key, body) }
        let before = conversationRows(of: buffer).count
        let result = buffers.update(key, body)
        if let after = buffers[key].map({ conversationRows(of: $0).count }) {
            buffers.update(key) { $0.scrollOffset = max(0, $0.scrollOffset + after - before) }
        }
        return result
    }
}
