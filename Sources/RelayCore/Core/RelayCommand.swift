import Foundation

/// A message the relay answers itself, in any protocol: it is stored in the conversation's
/// history like any message, its reply is stored as the answer, and no backend sees either.
public enum RelayCommand: Equatable, Sendable {
    /// `/backend` shows the conversation's backend and the choices; `/backend NAME` binds the
    /// conversation to `NAME` for the turns after it.
    case backend(String?)

    public init?(_ text: String) {
        // Every turn asks; almost none is a command: decide on the first non-blank byte before
        // paying for Foundation's trimming.
        // (A non-ASCII first byte may be Unicode white space: the full path decides.)
        let first = text.utf8.first { $0 != 0x20 && !(0x09...0x0D).contains($0) }
        guard let first, first == UInt8(ascii: "/") || first >= 0x80 else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed == "/backend" || trimmed.hasPrefix("/backend ") else { return nil }
        let name = trimmed.dropFirst("/backend".count).trimmingCharacters(in: .whitespaces)
        self = .backend(name.isEmpty ? nil : name)
    }
}

extension Turns {
    /// Runs a relay command in its turn's place (in order with the conversation's other turns).
    func run(_ command: RelayCommand, _ turn: Turn, in conversation: Conversation?) {
        let current = conversation?.backend ?? turn.policy.backend ?? router.defaultBackend
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
        }
    }
}
