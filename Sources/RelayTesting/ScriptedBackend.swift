import RelayCore
import Synchronization

/// A backend whose turns the test drives by hand.
public final class ScriptedBackend: Backend {
    /// One started turn: what it was asked and the handle to answer it.
    public final class Run: Sendable {
        public let request: TurnRequest
        private let events: @Sendable (TurnEvent) -> Void
        private let state = Mutex((cancelled: false, ended: false))
        private let answered = Mutex<[(requestID: String, answer: ApprovalAnswer)]>([])

        init(request: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) {
            self.request = request
            self.events = events
        }

        public var isCancelled: Bool { state.withLock { $0.cancelled } }

        public func emit(_ event: TurnEvent) { events(event) }

        /// The answers the core gave to the run's questions (`TurnEvent.approval`), in order.
        public var answers: [(requestID: String, answer: ApprovalAnswer)] { answered.withLock { $0 } }

        func cancel() { state.withLock { $0.cancelled = true } }

        func answer(_ requestID: String, _ answer: ApprovalAnswer) { answered.withLock { $0.append((requestID, answer)) } }
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

    private let resetsSeen = Mutex<[String]>([])
    private let compacts = Mutex(false)

    /// The conversations it was told were reset (`Backend.reset`), in order.
    public var resets: [String] { resetsSeen.withLock { $0 } }

    /// Whether it takes `/compact` as its own command (set by a test).
    public var canCompact: Bool {
        get { compacts.withLock { $0 } }
        set { compacts.withLock { $0 = newValue } }
    }

    public func reset(conversationID: String, reason: ResetReason) { resetsSeen.withLock { $0.append(conversationID) } }

    public func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnHandle {
        let run = Run(request: turn, events: events)
        started.withLock { $0.append(run) }
        for event in answer?(turn) ?? [] { run.emit(event) }
        return TurnHandle(answer: { run.answer($0, $1) }, cancel: { run.cancel() })
    }
}
