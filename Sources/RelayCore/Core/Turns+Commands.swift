extension Turns {
    /// Runs a relay command in its turn's place (in order with the conversation's other turns).
    func run(_ command: RelayCommand, _ turn: Turn, in conversation: Conversation?) {
        let current = router.backendName(for: conversation, policy: turn.policy)
        let choices = router.backends.keys.sorted().joined(separator: ", ")
        switch command {
        case .backend(nil), .model(nil):
            finish(turn, text: "This conversation is answered by \(current). Backends: \(choices). Switch with /backend NAME.")
        case .backend(let name?), .model(let name?):
            guard let backend = Self.backend(named: name, in: router, acceptingKind: command != .backend(name)) else {
                return finish(turn, text: "There is no backend named \(name.prefix(64)). Backends: \(choices).")
            }
            edit(turn, .rebind(backend: backend), done: "This conversation is now answered by \(backend) (it was \(current)).")
        case .think(nil):
            let level = conversation?.settings.thinkingLevel ?? "the backend's default"
            finish(turn, text: "Thinking: \(level). Levels: \(ThinkingLevel.all.joined(separator: ", ")); /think default clears it.")
        case .think(let word?):
            let level = word.lowercased() == "default" ? nil : ThinkingLevel.canonical(word)
            guard level != nil || word.lowercased() == "default" else {
                return finish(turn, text: "There is no thinking level \(word.prefix(32)). Levels: \(ThinkingLevel.all.joined(separator: ", ")).")
            }
            edit(turn, .configure(.thinkingLevel(level)), done: "Thinking: \(level ?? "the backend's default") from the next message.")
        case .reset(let reason):
            // The command's own exchange stays with the conversation being archived; the keys move
            // on once it is stored, and messages sent meanwhile wait for the fresh conversation.
            beginReset(turn.conversationID)
            whenEnded(runID: turn.ref.runID) { [self] _ in
                reset(conversationID: turn.conversationID, reason: reason, policy: turn.policy) { _ in }
            }
            abortQueued(behind: turn, reason: "the session was reset")
            finish(turn, text: "Started a new session. The earlier messages stay in the archived conversation.")
        case .compact:
            // A backend that compacts runs `/compact` itself (`Turns.start`); this one keeps no context to compact.
            finish(turn, text: "\(current) keeps no context of its own to compact.")
            conversations.compacted(turn.conversationID, userID: turn.userID, done: false)
        case .stop:
            finish(turn, text: "Nothing is running.")
        case .approval(let decision, let id):
            decide(decision, approvalID: id, for: turn) { [self] reply in finish(turn, text: reply) }
        }
    }

    /// Stores `edit` and answers the command with `done`.
    private func edit(_ turn: Turn, _ edit: ConversationEdit, done: String) {
        conversations.edit(id: turn.conversationID, edit) { [self] result in
            switch result {
            case .success: finish(turn, text: done)
            case .failure(let error): end(turn, .failed, reason: "the conversation could not be changed: \(error)")
            }
        }
    }

    /// The backend `name` names: its name, or (a model as OpenClaw's pickers write it) `<kind>/NAME`.
    static func backend(named name: String, in router: Router, acceptingKind: Bool) -> String? {
        if router.backends[name] != nil { return name }
        guard acceptingKind, let slash = name.lastIndex(of: "/") else { return nil }
        let bare = String(name[name.index(after: slash)...])
        return router.backends[bare] != nil ? bare : nil
    }

    /// A command answered beside the conversation's turns: an approval decided, or `/stop`.
    func answerAside(_ turn: Turn, _ command: RelayCommand) {
        turn.isAside = true
        turn.startedAt = clock.nowMillis()
        switch command {
        case .approval(let decision, let id):
            decide(decision, approvalID: id, for: turn) { [self] reply in finish(turn, text: reply) }
        default:
            let stopped = abort(conversationID: turn.conversationID, reason: "stopped by /stop")
            finish(turn, text: stopped.isEmpty ? "Nothing is running." : "Stopped \(stopped.count) run\(stopped.count == 1 ? "" : "s").")
        }
    }

    /// Drops the turns queued behind `turn` (each asker hears it was aborted).
    private func abortQueued(behind turn: Turn, reason: String) {
        for queued in lanes[turn.conversationID]?.queue ?? [] { abort(conversationID: turn.conversationID, runID: queued.ref.runID, reason: reason) }
    }

    private func decide(_ decision: ApprovalDecision, approvalID: String?, for turn: Turn, reply: @escaping (String) -> Void) {
        let pending = approvals.pending(userID: turn.userID)
        guard let id = approvalID ?? (pending.count == 1 ? pending[0].id : nil) else {
            let listed = pending.map { "\($0.shortID) (\($0.toolName): \($0.summary.prefix(60)))" }.joined(separator: ", ")
            return reply(
                pending.isEmpty
                    ? "There is no approval waiting." : "Several approvals are waiting: \(listed). Say which, e.g. /approve \(pending[0].shortID)."
            )
        }
        approvals.decide(id, userID: turn.userID, decision: decision, deviceID: turn.ref.deviceID) { result in
            switch result {
            case .success(let approval):
                let done =
                    switch decision {
                    case .allowOnce: "Approved once"
                    case .allowAlways: "Always allowed for this session"
                    case .deny: "Denied"
                    }
                reply("\(done): \(approval.toolName) \(approval.summary.prefix(200)) (\(approval.shortID)).")
            case .failure(let refusal):
                reply("Could not \(decision == .deny ? "deny" : "approve"): \(refusal).")
            }
        }
    }
}
