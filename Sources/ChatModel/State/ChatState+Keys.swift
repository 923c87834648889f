/// Keys: the ones that act on buffers and the view come first; the rest go to the input line.
///
/// | key | action |
/// |---|---|
/// | Ctrl-C | abort the answer running in this buffer |
/// | Ctrl-N / Alt-Down, Ctrl-P / Alt-Up | next / previous buffer (wrapping) |
/// | Alt-1…Alt-9, Alt-0 | buffer 1…9, 10 |
/// | Alt-J N N | buffer NN (two digits) |
/// | Alt-A | the oldest buffer with the most activity; back to where it started when none is left |
/// | PgUp / PgDn | scroll a page (at the top, PgUp loads more history) |
/// | Alt-Home / Alt-End | scroll to the top / bottom |
/// | Alt-U | scroll to the unread marker |
/// | Ctrl-R | search backwards (see ``SearchState``) |
/// | Ctrl-L | redraw |
/// | Alt-O / Alt-S / Alt-N | answer the oldest approval waiting in this buffer: allow once / always (this session) / deny |
extension ChatState {
    mutating func handleKey(_ key: Key) {
        if notice != nil {
            notice = nil
            needsRedraw = true
        }
        if jumpDigits != nil { return handleJumpDigit(key) }
        if search != nil, handleSearchKey(key) { return }
        if handleViewKey(key) { return }
        editKey(key)
    }

    private mutating func handleViewKey(_ key: Key) -> Bool {
        switch (key.code, key.modifiers) {
        case (.character("c"), .control): abortActive()
        case (.character("l"), .control): needsRedraw = true
        case (.character("n"), .control), (.down, .alt): activate(buffers.neighbour(of: activeKey, offset: 1))
        case (.character("p"), .control), (.up, .alt): activate(buffers.neighbour(of: activeKey, offset: -1))
        case (.character(let digit), .alt) where digit.isASCII && digit.isNumber: jump(to: digit == "0" ? 10 : Int(String(digit)) ?? 0)
        case (.character("j"), .alt):
            jumpDigits = ""
            needsRedraw = true
        case (.character("a"), .alt): goToActivity()
        case (.character("u"), .alt): scrollToUnreadMarker()
        case (.pageUp, []): scroll(pages: 1)
        case (.pageDown, []): scroll(pages: -1)
        case (.home, .alt): scroll(pages: .max)
        case (.end, .alt): scroll(pages: .min)
        case (.character("r"), .control): beginSearch(query: "")
        case (.character(let letter), .alt) where ApprovalChoice.allCases.contains(where: { $0.key == letter }):
            answerApproval(ApprovalChoice.allCases.first { $0.key == letter }!)
        default: return false
        }
        return true
    }

    private mutating func editKey(_ key: Key) {
        let completer = TabCompleter(backends: backends, bufferNames: buffers.buffers.map(\.displayName))
        var ring = killRing
        let outcome = withEditor { $0.handle(key, killRing: &ring, completer: completer) }
        killRing = ring
        switch outcome {
        case .ignored: break
        case .edited: needsRedraw = true
        case .submitted(let text):
            needsRedraw = true
            submit(text)
        case .quit: effects.append(.quit)
        }
    }

    private mutating func handleJumpDigit(_ key: Key) {
        needsRedraw = true
        guard let digit = key.printable, digit.isASCII, digit.isNumber, let typed = jumpDigits else {
            jumpDigits = nil
            return
        }
        guard typed.isEmpty else {
            jumpDigits = nil
            return jump(to: Int(typed + String(digit)) ?? 0)
        }
        jumpDigits = String(digit)
    }

    mutating func jump(to number: Int) {
        guard let key = buffers.key(number: number) else { return show(notice: "no buffer \(number)") }
        activate(key)
    }

    mutating func abortActive() {
        guard let key = activeKey else { return show(notice: "no conversation to abort") }
        effects.append(.abort(key: key))
    }

    private mutating func goToActivity() {
        if let next = hotlist.next {
            if hotlistOrigin == nil { hotlistOrigin = activeKey }
            activate(next, keepingHotlistOrigin: true)
        } else if let origin = hotlistOrigin, buffers[origin] != nil {
            activate(origin)
        } else {
            show(notice: "no activity")
        }
    }

    /// Scrolls by pages (positive: up, into the past); `.max` / `.min` go to the top / bottom.
    mutating func scroll(pages: Int) {
        guard let key = activeKey, let buffer = activeBuffer, let height = conversationHeight, height > 0 else { return }
        let total = conversationRows(of: buffer).count
        let top = max(0, total - height)
        let current = min(buffer.scrollOffset, top)
        let step = max(1, height - 1)
        let wanted = pages >= Int.max / step ? top : pages <= Int.min / step ? 0 : current + pages * step
        if pages > 0, current == top { loadMoreHistory(of: key) }
        buffers.update(key) { $0.scrollOffset = max(0, min(top, wanted)) }
        needsRedraw = true
    }

    private mutating func loadMoreHistory(of key: String) {
        guard let buffer = buffers[key], buffer.historyState == .loaded, buffer.historyLimit < Command.maxHistoryLimit,
            buffer.lines.filter({ $0.seq != nil }).count >= buffer.historyLimit
        else { return }
        requestHistory(of: key, limit: buffer.historyLimit + configuration.historyLimit)
    }

    private mutating func scrollToUnreadMarker() {
        guard let key = activeKey, let buffer = activeBuffer, let height = conversationHeight else { return }
        let rows = conversationRows(of: buffer)
        guard let marker = rows.firstIndex(where: { $0.style == .unreadMarker }) else { return show(notice: "no unread messages") }
        let top = max(0, rows.count - height)
        buffers.update(key) { $0.scrollOffset = max(0, min(top, rows.count - marker - height)) }
        needsRedraw = true
    }
}
