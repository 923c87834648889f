import RelayCore
import Synchronization

/// Where one relay turn's events go: to the core until the turn ends or is cancelled, then nowhere.
///
/// - Important: `emit` is called on the process's thread; `cancel` from any thread. After
///   `cancel()` returns, at most the event already being delivered can still arrive.
final class ClaudeTurnSink: Sendable {
    /// The turn's number within the backend (its key in the process's session).
    let id: Int
    private let events: @Sendable (TurnEvent) -> Void
    private let closed = Mutex(false)

    init(id: Int, events: @escaping @Sendable (TurnEvent) -> Void) {
        self.id = id
        self.events = events
    }

    func emit(_ event: TurnEvent) {
        let open = closed.withLock { closed in
            defer { if event.endsTurn { closed = true } }
            return !closed
        }
        if open { events(event) }
    }

    /// Nothing more goes out.
    func cancel() { closed.withLock { $0 = true } }

    var isClosed: Bool { closed.withLock { $0 } }
}
