import Foundation

/// A message the relay answers itself, in any protocol: it is stored in the conversation's
/// history like any message, its reply is stored as the answer, and no backend sees either.
public enum RelayCommand: Equatable, Sendable {
    /// `/backend` shows the conversation's backend and the choices; `/backend NAME` binds the
    /// conversation to `NAME` for the turns after it.
    case backend(String?)

    public init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed == "/backend" || trimmed.hasPrefix("/backend ") else { return nil }
        let name = trimmed.dropFirst("/backend".count).trimmingCharacters(in: .whitespaces)
        self = .backend(name.isEmpty ? nil : name)
    }
}

extension Turns {
    /// Runs a relay command in its turn's place (in order with the conversation's other turns).
    func run(_ command: RelayCommand, _ turn: Turn) {
        let conversation = conversations.cached(id: turn.conversationID)
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
