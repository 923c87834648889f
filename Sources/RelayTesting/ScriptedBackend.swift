import RelayCore
import Synchronization

/// A backend whose turns the test drives by hand.
public final class ScriptedBackend: Backend {
    /// One started turn: what it was asked and the handle to answer it.
    public final class Run: Sendable {
        public let request: TurnRequest
        private let events: @Sendable (TurnEvent) -> Void
        private let state = Mutex((cancelled: false, ended: false))

        init(request: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) {
            self.request = request
            self.events = events
        }

        public var isCancelled: Bool { state.withLock { $0.cancelled } }

        public func emit(_ event: TurnEvent) { events(event) }

        func cancel() { state.withLock { $0.cancelled = true } }
    }

    public let name: String
    private let started = Mutex<[Run]>([])

    public init(name: String = "scripted") { self.name = name }

    public var runs: [Run] { started.withLock { $0 } }

    public func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnCancellation {
        let run = Run(request: turn, events: events)
        started.withLock { $0.append(run) }
        return TurnCancellation { run.cancel() }
    }
}
