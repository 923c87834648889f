import Foundation

/// A message the relay answers itself, in any protocol: it is stored in the conversation's
/// history like any message, its reply is stored as the answer, and no backend sees either.
public enum RelayCommand: Equatable, Sendable {
    /// `/backend` shows the conversation's backend and the choices; `/backend NAME` binds the
    /// conversation to `NAME` for the turns after it.
    case backend(String?)
    /// `/approve ID`, `/always ID`, `/deny ID`: decides the user's pending approval that ID (a
    /// unique prefix of 4+ characters) names; without an ID, the user's only pending one. Answered
    /// at once, not behind the conversation's running turn (which may be the one waiting).
    case approval(ApprovalDecision, String?)

    static let approvalWords: [String: ApprovalDecision] = ["/approve": .allowOnce, "/always": .allowAlways, "/deny": .deny]

    public init?(_ text: String) {
        // Every turn asks; almost none is a command: decide on the first non-blank byte before
        // paying for Foundation's trimming.
        // (A non-ASCII first byte may be Unicode white space: the full path decides.)
        let first = text.utf8.first { $0 != 0x20 && !(0x09...0x0D).contains($0) }
        guard let first, first == UInt8(ascii: "/") || first >= 0x80 else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let word = String(trimmed.prefix { !$0.isWhitespace })
        let rest = trimmed.dropFirst(word.count).trimmingCharacters(in: .whitespacesAndNewlines)
        let argument = rest.isEmpty ? nil : rest
        if word == "/backend" {
            self = .backend(argument)
        } else if let decision = Self.approvalWords[word] {
            self = .approval(decision, argument)
        } else {
            return nil
        }
    }
}

extension Turns {
    /// Runs a relay command in its turn's place (in order with the conversation's other turns).
    func run(_ command: RelayCommand, _ turn: Turn, in conversation: Conversation?) {
        let current = router.backendName(for: conversation, policy: turn.policy)
        let choices = router.backends.keys.sorted().joined(separator: ", ")
        switch command {
        case .backend(nil):
            finish(turn, text: "This conversation is answered by \(current). Backends: \(choices). Switch with /backend NAME.")
        case .backend(let name?) where router.backends[name] == nil:
            finish(turn, text: "There is no backend named \(name.prefix(64)). Backends: \(choices).")
        case .backend(let name?):
            conversations.edit(id: turn.conversationID, .rebind(backend: name)) { [self] result in
                switch result {
                case .success:
                    finish(turn, text: "This conversation is now answered by \(name) (it was \(current)).")
                case .failure(let error):
                    end(turn, .failed, reason: "the conversation could not be rebound: \(error)")
                }
            }
        case .approval(let decision, let id):
            decide(decision, approvalID: id, for: turn) { [self] reply in finish(turn, text: reply) }
        }
    }

    /// `/approve`, `/always`, `/deny`: decided and answered at once, beside the conversation's turns.
    func answerAside(_ turn: Turn, decision: ApprovalDecision, approvalID: String?) {
        turn.isAside = true
        turn.startedAt = clock.nowMillis()
        decide(decision, approvalID: approvalID, for: turn) { [self] reply in finish(turn, text: reply) }
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
