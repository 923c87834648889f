/// Approvals: a tool use waiting for the user's decision shows at the bottom of its conversation's
/// buffer, after the last line (the buffer opens if it was not; another buffer goes on the hotlist
/// and rings the bell), until it is resolved; then a line in the buffer says how it ended.
///
/// Alt-O (allow once), Alt-S (always, for the conversation's session) and Alt-N (deny) answer the
/// oldest approval waiting in the active buffer; `/approve`, `/always` and `/deny [id]` do the same,
/// or answer the approval whose id starts with `id`. The first answer from any device wins: the
/// approval stays shown ("answering…") until the gateway says how it was resolved.
extension ChatState {
    mutating func approvalRequested(_ approval: PendingApproval) {
        needsRedraw = true
        if let index = approvals.firstIndex(where: { $0.id == approval.id }) {
            let answering = approvals[index].answering
            approvals[index] = approval
            approvals[index].answering = answering
            return
        }
        approvals.append(approval)
        callAttention(to: approval)
    }

    /// What waits now, after a (re)connect: it replaces what was known (answers in flight stay marked).
    mutating func approvalsListed(_ listed: [PendingApproval]) {
        needsRedraw = true
        let known = Dictionary(approvals.map { ($0.id, $0.answering) }, uniquingKeysWith: { first, _ in first })
        approvals = listed.map { approval in
            var kept = approval
            kept.answering = known[approval.id] ?? nil
            return kept
        }
        for approval in approvals where known[approval.id] == nil { callAttention(to: approval) }
    }

    mutating func approvalResolved(_ approval: PendingApproval, outcome: String) {
        needsRedraw = true
        let shown = approvals.first { $0.id == approval.id } ?? approval
        approvals.removeAll { $0.id == approval.id }
        guard let key = shown.key, buffers[key] != nil else { return }
        let now = configuration.now()
        preservingScroll(of: key) { $0.transcript.appendLocal(role: .system, text: "\(shown.summary): \(outcome)", timestamp: now) }
    }

    mutating func approvalAnswerFailed(id: String, message: String) {
        if let index = approvals.firstIndex(where: { $0.id == id }) { approvals[index].answering = nil }
        show(notice: "could not answer \(id.prefix(8)): \(message)")
    }

    /// Answers the oldest approval waiting in the active buffer, or the one whose id starts with `id`.
    mutating func answerApproval(_ choice: ApprovalChoice, id: String? = nil) {
        let index: Int
        if let id {
            let prefix = id.lowercased()
            let matches = approvals.indices.filter { approvals[$0].id.lowercased().hasPrefix(prefix) }
            guard matches.count == 1 else {
                return show(notice: matches.isEmpty ? "no approval \(id) is waiting" : "\(id) names more than one approval: give more of its id")
            }
            index = matches[0]
        } else {
            guard let here = approvals.firstIndex(where: { isShown($0, in: activeKey) }) else {
                if let key = approvals.first?.key, let number = buffers.number(of: key) {
                    return show(notice: "no approval waits here; one waits in buffer \(number)")
                }
                return show(notice: "no approval waiting")
            }
            index = here
        }
        let approval = approvals[index]
        guard approval.choices.contains(choice) else { return show(notice: "this approval cannot be answered \(choice.label)") }
        approvals[index].answering = choice
        needsRedraw = true
        effects.append(.resolveApproval(id: approval.id, kind: approval.kind, choice: choice))
    }

    /// The approvals a buffer shows, oldest first (one the gateway gave no conversation shows in every buffer).
    func approvals(shownIn key: String?) -> [PendingApproval] { approvals.filter { isShown($0, in: key) } }

    private func isShown(_ approval: PendingApproval, in key: String?) -> Bool {
        key != nil && (approval.key == key || approval.key == nil)
    }

    private mutating func callAttention(to approval: PendingApproval) {
        guard let key = approval.key else { return }
        openIfNeeded(key, at: approval.createdAt)
        guard key != activeKey else { return }
        hotlist.record(key, level: .message)
        if configuration.bellOnActivity { effects.append(.bell) }
    }
}
