import ClawlineWire
import RelayCore

/// The turns of one Clawline account: `ClawlineTurnBook`'s actions performed on its link, with a
/// one-second tick while any turn is held.
///
/// - Important: loop thread only.
final class ClawlineAccountTurns: UpstreamTurns {
    let link: ClawlineLink
    private let loop: any LoopScheduler
    private let clock: any Clock
    private var book: ClawlineTurnBook
    private var sinks = TurnSinks()
    private var tickTimer: TimerID?
    static let tickMillis = 1_000

    init(link: ClawlineLink, loop: any LoopScheduler, clock: any Clock) {
        self.link = link
        self.loop = loop
        self.clock = clock
        book = ClawlineTurnBook(deviceID: link.deviceID)
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
        sinks.add(id, events)
        // Images inline, as Clawline messages carry them (uploads were read by `startTurn`).
        let images = turn.attachments.compactMap { attachment -> JSONValue? in
            guard MessageRules.inlineMimeTypes.contains(attachment.mimeType), let data = attachment.base64 else { return nil }
            return .object(["type": .string("image"), "mimeType": .string(attachment.mimeType), "data": .string(data)])
        }
        perform(book.start(id, text: turn.text, attachments: images.isEmpty ? nil : images, now: clock.nowMillis()))
    }

    func cancel(_ id: String) {
        sinks.remove(id)
        perform(book.cancel(id, now: clock.nowMillis()))
    }

    private func perform(_ actions: [ClawlineTurnBook.Action]) {
        for action in actions {
            switch action {
            case .send(let text):
                link.send(text)
            case .resync(let reason):
                link.resync(reason)
            case .emit(let id, let event):
                sinks.emit(event, to: id)
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
