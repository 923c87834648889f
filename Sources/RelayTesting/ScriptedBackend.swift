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
    /// When set, every turn is answered at once with what it returns (e.g. `[.progress(…), .final(…)]`).
    private let answer: (@Sendable (TurnRequest) -> [TurnEvent])?

    /// A backend whose turns wait for the test (`runs[i].emit`), or, with `answer`, answer at once.
    public init(name: String = "scripted", answer: (@Sendable (TurnRequest) -> [TurnEvent])? = nil) {
        self.name = name
        self.answer = answer
    }

    /// A backend that answers `echo: <text>` with one progress step, like the relay's echo backend.
    public static func echo(name: String = "echo") -> ScriptedBackend {
        ScriptedBackend(name: name) { turn in [.progress("echo"), .final("echo: \(turn.text)")] }
    }

    public var runs: [Run] { started.withLock { $0 } }

    public func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnCancellation {
        let run = Run(request: turn, events: events)
        started.withLock { $0.append(run) }
        for event in answer?(turn) ?? [] { run.emit(event) }
        return TurnCancellation { run.cancel() }
    }
}
