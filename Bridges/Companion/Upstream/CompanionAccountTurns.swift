import RelayCore

/// The turns of one Companion account: `CompanionTurnBook`'s actions performed on its link.
///
/// - Important: loop thread only.
final class CompanionAccountTurns: UpstreamTurns {
    let link: CompanionLink
    private let workingDirectory: String?
    private let clock: any Clock
    private var book = CompanionTurnBook()
    private var sinks = TurnSinks()

    init(link: CompanionLink, workingDirectory: String?, clock: any Clock) {
        self.link = link
        self.workingDirectory = workingDirectory
        self.clock = clock
        link.onOwn = { [weak self] own in self?.perform(own) }
    }

    func start(_ turn: TurnRequest, id: String, events: @escaping @Sendable (TurnEvent) -> Void) {
        guard link.isReady else { return events(.failed("the link to \(link.name) is \(link.state.rawValue)")) }
        sinks.add(id, events)
        // The configured directory is a place on that server; a conversation's own directory is a
        // place here, and means something there only when both sides share a layout.
        perform(book.start(id, text: turn.text, directory: workingDirectory ?? turn.workingDirectory, now: clock.nowMillis()))
    }

    func cancel(_ id: String) {
        sinks.remove(id)
        book.cancel(id, now: clock.nowMillis())
    }

    /// What the link reports: frames and ticks feed the book, a drop fails what ran on it.
    private func perform(_ own: CompanionLinkMachine.Own) {
        switch own {
        case .frame(let frame): perform(book.receive(frame, now: clock.nowMillis()))
        case .tick(let now): perform(book.expire(now: now))
        case .down: perform(book.linkDown(reason: "the link to \(link.name) dropped"))
        }
    }

    private func perform(_ actions: [CompanionTurnBook.Action]) {
        for action in actions {
            switch action {
            case .send(let text): link.send(text)
            case .emit(let id, let event): sinks.emit(event, to: id)
            }
        }
    }
}
