/// Server events. Activity in a buffer that is not active (a new message or the start of an answer)
/// raises its unread count (not for user messages from other devices), sets its unread marker, puts it
/// on the hotlist and, for messages not from the user, rings the bell once. A message for a conversation
/// that has no buffer (new, or closed here) opens one. A conversation read on another device (its
/// unread count drops to 0, or its read seq reaches the newest line) stays on the hotlist dimmed
/// (``ActivityLevel/low``) and loses its unread marker.
extension ChatState {
    mutating func handleServer(_ event: ServerEvent) {
        if case .streaming = event {} else { needsRedraw = true }
        switch event {
        case .connection(let state): connectionChanged(to: state)
        case .sessionsListed(let sessions): listed(sessions)
        case .sessionCreated(let session):
            buffers.add(ChatBuffer(session: session))
            activate(session.key)
        case .sessionChanged(let update): changed(update)
        case .history(let key, let messages): historyArrived(messages, for: key)
        case .message(let key, let message), .final(let key, let message): arrived(message, in: key)
        case .streaming(let key, let id, let text): streamed(text, id: id, in: key)
        case .error(let key, let message): failed(message, in: key)
        case .backendsListed(let names, let defaultBackend):
            backends = names
            serverDefaultBackend = defaultBackend
            if waitingForDefaultBackend { createFirstConversation() }
        case .approvalRequested(let approval): approvalRequested(approval)
        case .approvalResolved(let approval, let outcome): approvalResolved(approval, outcome: outcome)
        case .approvalsListed(let listed): approvalsListed(listed)
        case .approvalAnswerFailed(let id, let message): approvalAnswerFailed(id: id, message: message)
        }
    }

    private mutating func connectionChanged(to state: ConnectionState) {
        connection = state
        switch state {
        case .connected:
            effects += [.listSessions, .listBackends, .listApprovals]
            if wasConnected { reloadAfterReconnect() }
            wasConnected = true
        case .disconnected:
            for key in buffers.keys { buffers.update(key) { $0.transcript.interruptStreams() } }
        case .refused(let reason):
            for key in buffers.keys { buffers.update(key) { $0.transcript.interruptStreams() } }
            say(reason, role: .error)
        case .connecting:
            break
        }
    }

    /// What arrived while disconnected is unknown: the active buffer reloads now, the others when entered.
    private mutating func reloadAfterReconnect() {
        for key in buffers.keys {
            buffers.update(key) { if $0.historyState != .notLoaded { $0.historyState = .stale } }
        }
        if let key = activeKey, let buffer = activeBuffer { requestHistory(of: key, limit: max(configuration.historyLimit, buffer.historyLimit)) }
    }

    private mutating func listed(_ sessions: [SessionSummary]) {
        for session in sessions where buffers[session.key] != nil {
            changed(
                SessionUpdate(
                    key: session.key,
                    displayName: session.displayName,
                    unreadCount: session.unreadCount,
                    lastReadSeq: session.lastReadSeq,
                    updatedAt: session.updatedAt,
                    preview: session.preview
                )
            )
        }
        // Unread at start (or in a conversation made while away): activity, like a message arriving.
        for key in buffers.addNew(sessions) where buffers[key].map({ $0.unreadCount > 0 }) == true { hotlist.record(key, level: .message) }
        let first = !listedOnce
        listedOnce = true
        if activeKey == nil, let recent = buffers.buffers.max(by: { $0.updatedAt < $1.updatedAt }) { activate(recent.key) }
        if first, sessions.isEmpty { createFirstConversation() }
    }

    /// No conversation at all: ask for one on the default backend, titled after it.
    mutating func createFirstConversation() {
        guard let backend = defaultBackend else {
            waitingForDefaultBackend = true
            return
        }
        waitingForDefaultBackend = false
        effects.append(.createConversation(backend: backend, title: backend))
    }

    private mutating func changed(_ update: SessionUpdate) {
        if buffers[update.key] == nil {
            guard let unread = update.unreadCount, unread > 0 else { return }
            buffers.add(ChatBuffer(session: SessionSummary(key: update.key, displayName: update.displayName, backend: update.backend)))
        }
        let key = update.key
        let before = buffers[key]?.unreadCount ?? 0
        buffers.update(key) { buffer in
            if let name = update.displayName { buffer.displayName = name }
            if let updatedAt = update.updatedAt { buffer.updatedAt = max(buffer.updatedAt, updatedAt) }
            if let preview = update.preview { buffer.preview = preview }
            if let seq = update.lastReadSeq { buffer.lastReadSeq = max(buffer.lastReadSeq ?? seq, seq) }
            if let unread = update.unreadCount { buffer.unreadCount = unread }
        }
        guard key != activeKey, let buffer = buffers[key] else { return }
        if let unread = update.unreadCount, unread > before { hotlist.record(key, level: .message) }
        let readUpToNewest = update.lastReadSeq.map { seq in buffer.transcript.newestSeq.map { seq >= $0 } ?? false } ?? false
        if (update.unreadCount == 0 && before > 0) || readUpToNewest {
            // Read on another device: the activity stays, dimmed; the marker stops saying "new".
            hotlist.lower(key, to: .low)
            buffers.update(key) { $0.moveMarkerToEnd() }
        }
    }

    private mutating func historyArrived(_ messages: [ChatMessage], for key: String) {
        preservingScroll(of: key) { buffer in
            buffer.transcript.merge(history: messages)
            buffer.historyState = .loaded
            if buffer.unreadMarker == nil, buffer.unreadCount > 0, let read = buffer.lastReadSeq, (buffer.transcript.newestSeq ?? .min) > read {
                buffer.unreadMarker = LineOrder(seq: read, local: .max)
            }
        }
    }

    private mutating func arrived(_ message: ChatMessage, in key: String) {
        openIfNeeded(key, at: message.timestamp)
        let change = preservingScroll(of: key) { buffer in
            let change = buffer.transcript.apply(message)
            buffer.updatedAt = max(buffer.updatedAt, message.timestamp)
            buffer.preview = String(message.text.prefix(200))
            return change
        }
        if change == .added { noteActivity(in: key, lineID: message.id, fromUser: message.role == .user) }
    }

    private mutating func streamed(_ text: String, id: String, in key: String) {
        let now = configuration.now()
        openIfNeeded(key, at: now)
        let change = preservingScroll(of: key) { $0.transcript.stream(id: id, text: text, timestamp: now) }
        if change != .unchanged { needsRedraw = true }
        if change == .added { noteActivity(in: key, lineID: id, fromUser: false) }
    }

    private mutating func failed(_ message: String, in key: String?) {
        guard let key, buffers[key] != nil else { return show(notice: message) }
        let now = configuration.now()
        preservingScroll(of: key) { buffer in
            buffer.transcript.interruptStreams()
            buffer.transcript.appendLocal(role: .error, text: message, timestamp: now)
        }
        if key != activeKey { hotlist.record(key, level: .message) }
    }

    mutating func openIfNeeded(_ key: String, at timestamp: Int64) {
        guard buffers[key] == nil else { return }
        buffers.add(ChatBuffer(session: SessionSummary(key: key, updatedAt: timestamp)))
        if activeKey == nil { activate(key) }
    }

    private mutating func noteActivity(in key: String, lineID: String, fromUser: Bool) {
        guard key != activeKey else { return }
        buffers.update(key) { buffer in
            buffer.markArrival(of: lineID)
            if !fromUser { buffer.unreadCount += 1 }
        }
        hotlist.record(key, level: fromUser ? .low : .message)
        if !fromUser, configuration.bellOnActivity { effects.append(.bell) }
    }
}
