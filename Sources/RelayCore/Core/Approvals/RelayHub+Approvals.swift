extension RelayHub {
    /// Every device of the user hears an approval asked and resolved in its protocol's form, away
    /// devices get pushes, and the conversation gets a note (protocols without an approval frame
    /// answer with `/approve`, `/always` or `/deny`).
    func approvalChanged(_ update: ApprovalUpdate) {
        let approval = update.approval
        bus.publish(.approval(update), to: approval.userID)
        pushes.approvalChanged(update)
        note(Self.noteText(update), userID: approval.userID, conversationID: approval.conversationID)
    }

    /// Stores the relay's note in a conversation (or a note an operator added: OpenClaw's
    /// `chat.inject`) and hands it out like an answer (it is not one); `completion` hears the
    /// stored event once it is out.
    public func note(
        _ text: String,
        userID: String,
        conversationID: String,
        completion: @escaping (Result<ChatEvent, any Error>) -> Void = { _ in }
    ) {
        let targets = queue.targets(userID: userID, conversationID: conversationID)
        journal.note(userID: userID, conversationID: conversationID, content: text, now: clock.nowMillis(), queue: targets) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let event): queue.publish(.message(event), userID: userID, queuedFor: targets)
            case .failure(let error):
                logger.error("a note could not be stored", metadata: ["conversation": "\(conversationID)", "error": "\(error)"])
            }
            completion(result)
        }
    }

    /// "Claude Code wants to run Bash: `touch x`. Reply /approve 4f2a, /always 4f2a or /deny 4f2a
    /// (expires in 10 min)." and "Bash `touch x`: denied by Ann's iPhone from clawline (4f2a)."
    static func noteText(_ update: ApprovalUpdate) -> String {
        switch update {
        case .requested(let approval):
            let verb = approval.toolName == "Bash" ? "run" : "use"
            let what = approval.summary.isEmpty ? "" : ": `\(approval.summary)`"
            let words: [(ApprovalDecision, String)] = [(.allowOnce, "/approve"), (.allowAlways, "/always"), (.deny, "/deny")]
            let replies = words.filter { approval.decisions.contains($0.0) }.map { "\($0.1) \(approval.shortID)" }
            let listed = replies.count > 1 ? replies.dropLast().joined(separator: ", ") + " or " + replies.last! : replies.joined()
            let expiry = Approvals.duration(approval.expiresAt - approval.createdAt)
            return "\(approval.agent) wants to \(verb) \(approval.toolName)\(what). Reply \(listed) (expires in \(expiry))."
        case .resolved(let approval, let resolution):
            let what = approval.summary.isEmpty ? approval.toolName : "\(approval.toolName) `\(approval.summary)`"
            return "\(what): \(resolution.summary) (\(approval.shortID))."
        }
    }
}
