import Logging
import RelayCore
import RelayTransport

/// A client device account on a Clawline provider (a real one, or another relay's `[clawline]`).
///
/// The first start pairs (the provider's admin approves the device); the token, device id and
/// replay cursor live in `<accounts>/<name>.clawline.json` (0600). Each turn is sent as a
/// `message` and answered by the provider's assistant; since the provider keeps one timeline
/// per user, turns run one at a time in arrival order (see `ProviderTurnBook`).
public final class ClawlineBackend: Backend {
    public let name: String
    private let loop: ServiceLoop
    private let runs: LoopBound<ProviderRuns>

    /// Reads or creates the account file; throws when it cannot (named in the error).
    public init(
        name: String,
        target: ServiceLoop.ClientTarget,
        deviceName: String,
        accountsDirectory: String,
        loop: ServiceLoop,
        logger: Logger,
        onState: @escaping (LinkState, String) -> Void
    ) throws {
        self.name = name
        self.loop = loop
        let file = try CredentialFile(directory: accountsDirectory, account: name, logger: logger)
        let link = ClawlineLink(name: name, target: target, deviceName: deviceName, file: file, connector: loop, logger: logger, onState: onState)
        runs = LoopBound(ProviderRuns(link: link, loop: loop, clock: SystemClock()), loop: loop)
    }

    /// Opens the link; it heals itself from then on. Loop thread.
    public func connect() { runs.value.link.connect() }

    public func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnCancellation {
        runs.startTurn(turn, events: events)
    }
}

/// The turns of one Clawline account: `ProviderTurnBook`'s actions performed on its link, with a
/// one-second tick while any turn is held.
///
/// - Important: loop thread only.
final class ProviderRuns: UpstreamTurns {
    let link: ClawlineLink
    private let loop: any LoopScheduler
    private let clock: any Clock
    private var book: ProviderTurnBook
    private var sinks: [String: @Sendable (TurnEvent) -> Void] = [:]
    private var tickTimer: TimerID?
    static let tickMillis = 1_000

    init(link: ClawlineLink, loop: any LoopScheduler, clock: any Clock) {
        self.link = link
        self.loop = loop
        self.clock = clock
        book = ProviderTurnBook(deviceID: link.deviceID)
        link.onUp = { [weak self] result in
            guard let self else { return }
            perform(book.linkUp(result, now: clock.nowMillis()))
        }
        link.onFrame = { [weak self] frame in
            guard let self else { return }
            perform(book.receive(frame, now: clock.nowMillis()))
        }
        link.onDown = { [weak self] in self?.book.linkDown() }
        link.onStopped = { [weak self] detail in
            guard let self else { return }
            perform(book.failAll("the link to \(self.link.name) failed: \(detail)"))
        }
    }

    func start(_ turn: TurnRequest, id: String, events: @escaping @Sendable (TurnEvent) -> Void) {
        switch link.state {
        case .failed, .awaitingApproval, .badCredentials:
            return events(.failed("the link to \(link.name) is \(link.state.rawValue)"))
        case .connecting, .connected, .retrying:
            break
        }
        sinks[id] = events
        perform(book.start(id, text: turn.text, now: clock.nowMillis()))
    }

    func cancel(_ id: String) {
        sinks[id] = nil
        perform(book.cancel(id, now: clock.nowMillis()))
    }

    private func perform(_ actions: [ProviderTurnBook.Action]) {
        for action in actions {
            switch action {
            case .send(let text):
                link.send(text)
            case .resync(let reason):
                link.resync(reason)
            case .emit(let id, let event):
                guard let sink = sinks[id] else { continue }
                switch event {
                case .final, .failed: sinks[id] = nil
                case .typing, .progress, .toolStarted, .toolEnded, .backendSession: break
                }
                sink(event)
            }
        }
        armTick()
    }

    private func armTick() {
        guard tickTimer == nil, book.needsTicks else { return }
        tickTimer = loop.schedule(afterMillis: Self.tickMillis) { [weak self] in
            guard let self else { return }
            tickTimer = nil
            perform(book.tick(now: clock.nowMillis()))
        }
    }
}
