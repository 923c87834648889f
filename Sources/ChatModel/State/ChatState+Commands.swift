/// What Enter does: run a command, or send a message to the active buffer.
extension ChatState {
    mutating func submit(_ text: String) {
        guard let parsed = CommandParser.parse(text) else { return send(CommandParser.messageText(text)) }
        switch parsed {
        case .success(let command): execute(command)
        case .failure(let error): show(notice: error.message)
        }
    }

    /// Sends to the active buffer and shows the message at once (as pending) until the server's copy
    /// replaces it. Sending means the buffer is read: its unread marker goes.
    private mutating func send(_ text: String) {
        guard let key = activeKey else { return show(notice: "no conversation yet: /new [backend] starts one") }
        sentCount += 1
        let clientID = "\(configuration.clientIDPrefix)-\(sentCount)"
        let now = configuration.now()
        buffers.update(key) { buffer in
            buffer.transcript.appendPending(clientID: clientID, text: text, timestamp: now)
            buffer.unreadMarker = nil
            buffer.scrollOffset = 0
        }
        search = nil
        effects.append(.send(key: key, text: text, clientID: clientID))
    }

    mutating func execute(_ command: Command) {
        switch command {
        case .help(let topic): help(topic)
        case .new(let backend, let title): create(on: backend, title: title)
        case .buffer(.number(let number)): jump(to: number)
        case .buffer(.name(let name)):
            guard let key = buffers.match(name: name, after: activeKey) else { return show(notice: "no buffer matches \(name)") }
            activate(key)
        case .close: closeActive()
        case .rename(let title):
            guard let key = activeKey else { return show(notice: "no conversation to rename") }
            buffers.update(key) { $0.displayName = title }
            effects.append(.rename(key: key, title: title))
        case .abort: abortActive()
        case .backends:
            effects.append(.listBackends)
            let names = backends.isEmpty ? "none known yet" : backends.joined(separator: ", ")
            say("backends: \(names)" + (defaultBackend.map { " (default: \($0))" } ?? ""))
        case .search(let text): beginSearch(query: text)
        case .history(let limit):
            guard let key = activeKey else { return show(notice: "no conversation") }
            requestHistory(of: key, limit: limit ?? configuration.historyLimit)
        case .answer(let choice, let id): answerApproval(choice, id: id)
        case .quit: effects.append(.quit)
        }
    }

    private mutating func help(_ topic: String?) {
        if let topic {
            guard let usage = Command.usage[topic] else { return show(notice: "no command /\(topic) (try /help)") }
            return say(usage)
        }
        let keys = [
            "keys: Enter send, Alt-Enter/Ctrl-J newline, Ctrl-C abort, Ctrl-D quit (empty line), Tab complete",
            "buffers: Ctrl-N/Ctrl-P or Alt-Down/Alt-Up next/previous, Alt-1..9 and Alt-J NN jump, Alt-A activity",
            "view: PgUp/PgDn scroll, Alt-U first unread, Ctrl-R search, Ctrl-L redraw",
            "approvals (the oldest waiting in this buffer): Alt-O allow once, Alt-S always (this session), Alt-N deny",
        ]
        say((Command.names.compactMap { Command.usage[$0] } + keys).joined(separator: "\n"))
    }

    private mutating func create(on named: String?, title: String?) {
        guard let backend = named ?? defaultBackend else { return show(notice: "no backend known yet: /new BACKEND [title]") }
        if !backends.isEmpty, !backends.contains(where: { $0.lowercased() == backend.lowercased() }) {
            return show(notice: "unknown backend \(backend) (backends: \(backends.joined(separator: ", ")))")
        }
        let canonical = backends.first { $0.lowercased() == backend.lowercased() } ?? backend
        effects.append(.createConversation(backend: canonical, title: title))
    }

    /// Closes the buffer (the conversation stays); the buffer that takes its number becomes active.
    private mutating func closeActive() {
        guard let key = activeKey, let index = buffers.close(key) else { return show(notice: "no buffer to close") }
        hotlist.remove(key)
        activeKey = nil
        search = nil
        if !buffers.isEmpty { activate(buffers.buffers[min(index, buffers.count - 1)].key) }
        needsRedraw = true
    }
}
