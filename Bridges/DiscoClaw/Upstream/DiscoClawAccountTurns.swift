import DiscoClawWire
import Foundation
import Logging
import RelayCore

/// Posts the turns of one DiscoClaw upstream account over REST: the upstream conversation each
/// relay conversation continues, the `POST` of each turn's text (retried with the same `clientId`
/// after a transport error, which the server takes once), and `DiscoClawTurnBook`'s events handed
/// to the turns. Registration and the catch-up `/sync` are in `DiscoClawAccountTurns+Sync`.
///
/// - Important: loop thread only.
final class DiscoClawAccountTurns: UpstreamTurns {
    struct Turn {
        let conversationID: String
        let text: String
        /// The uppercase UUID every attempt of this turn's `POST` carries.
        let clientID: String
        var attempts = 0
        /// The upstream conversation was gone once and made again.
        var remapped = false
        /// The socket generation when the `POST` went out.
        var epoch = 0
    }

    /// `POST`s (and conversation creations) tried at most this often before the turn fails.
    static let maxAttempts = 5
    static let maxTitleCharacters = 60

    let name: String
    let link: DiscoClawLink
    let rest: DiscoClawREST
    let credential: DiscoClawCredential
    let titlePrefix: String?
    let writer: DiscoClawAccountWriter
    let clock: any Clock
    let loop: any LoopScheduler
    let logger: Logger
    var stored: DiscoClawAccountFile
    var book = DiscoClawTurnBook()
    var turns: [String: Turn] = [:]
    var sinks = TurnSinks()
    /// Relay conversations whose upstream conversation is being created, and the turns waiting for it.
    var creating: [String: [String]] = [:]
    /// Counts sockets opened: an answer's events are only sure to have been heard on the socket
    /// that was open when its `POST` went out.
    var epoch = 0
    var syncRunning = false
    var linkCatchUpWanted = false
    var extraSyncWanted = false

    init(
        name: String,
        link: DiscoClawLink,
        rest: DiscoClawREST,
        credential: DiscoClawCredential,
        titlePrefix: String?,
        stored: DiscoClawAccountFile,
        writer: DiscoClawAccountWriter,
        clock: any Clock,
        loop: any LoopScheduler,
        logger: Logger
    ) {
        self.name = name
        self.link = link
        self.rest = rest
        self.credential = credential
        self.titlePrefix = titlePrefix
        self.stored = stored
        self.writer = writer
        self.clock = clock
        self.loop = loop
        self.logger = logger
        link.onOwn = { [weak self] own in self?.perform(own) }
    }

    func start(_ turn: TurnRequest, id: String, events: @escaping @Sendable (TurnEvent) -> Void) {
        guard link.state != .badCredentials else { return events(.failed("the link to \(name) is bad_credentials: the token was refused")) }
        guard rest.token != nil else { return events(.failed("the account \(name) is not registered yet (\(link.state.rawValue))")) }
        guard book.admit(id) else { return events(.failed("\(book.count) turns are already waiting on \(name)")) }
        sinks.add(id, events)
        turns[id] = Turn(conversationID: turn.conversationID, text: turn.text, clientID: UUID().uuidString.uppercased())
        events(.typing(true))
        proceed(id)
    }

    func cancel(_ id: String) {
        sinks.remove(id)
        turns[id] = nil
        book.forget(id)
    }

    /// Posts the turn in its upstream conversation, creating that first when there is none.
    private func proceed(_ id: String) {
        guard let turn = turns[id] else { return }
        if let upstream = stored.conversations[turn.conversationID] { return post(id, in: upstream) }
        if creating[turn.conversationID] != nil { return creating[turn.conversationID]!.append(id) }
        creating[turn.conversationID] = [id]
        createConversation(turn.conversationID, title: title(for: turn.text), attempt: 1)
    }

    private func title(for text: String) -> String? {
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let cut = line.count > Self.maxTitleCharacters ? String(line.prefix(Self.maxTitleCharacters - 1)) + "…" : line
        let title = (titlePrefix ?? "") + cut
        return title.isEmpty ? nil : title
    }

    private func createConversation(_ conversationID: String, title: String?, attempt: Int) {
        rest.call("POST", "/conversations", body: DiscoClawConversationRequest(title: title)) { [weak self] outcome in
            guard let self else { return }
            let waiting = creating[conversationID]?.filter { turns[$0] != nil } ?? []
            switch outcome {
            case .answered(let status, let body) where (200..<300).contains(status):
                creating[conversationID] = nil
                guard let upstream = DiscoClawJSON.decode(DiscoClawConversation.self, from: body)?.id else {
                    for id in waiting { fail(id, "\(name): the server created a conversation without an id") }
                    return
                }
                stored.conversations[conversationID] = upstream
                writer.save(stored)
                for id in waiting { post(id, in: upstream) }
            case .answered(let status, let body) where !Self.isTransient(status):
                creating[conversationID] = nil
                if status == 401 { link.tokenRefused() }
                let reason = "\(name) refused a new conversation: \(status) \(DiscoClawREST.errorText(body) ?? "")"
                for id in waiting { fail(id, reason) }
            case .answered, .failed:
                guard attempt < Self.maxAttempts, !waiting.isEmpty else {
                    creating[conversationID] = nil
                    for id in waiting { fail(id, "\(name) could not create a conversation: \(Self.describe(outcome))") }
                    return
                }
                creating[conversationID] = waiting
                retryLater(attempt: attempt) { [weak self] in self?.createConversation(conversationID, title: title, attempt: attempt + 1) }
            }
        }
    }

    private func post(_ id: String, in upstream: String) {
        guard var turn = turns[id] else { return }
        turn.attempts += 1
        turn.epoch = epoch
        turns[id] = turn
        let body = DiscoClawMessageRequest(content: turn.text, clientId: turn.clientID)
        rest.call("POST", "/conversations/\(DiscoClawREST.segment(upstream))/messages", body: body) { [weak self] outcome in
            self?.posted(id, in: upstream, outcome)
        }
    }

    private func posted(_ id: String, in upstream: String, _ outcome: DiscoClawREST.Outcome) {
        guard let turn = turns[id] else { return }
        switch outcome {
        case .answered(let status, let body) where (200..<300).contains(status):
            guard let reply = DiscoClawJSON.decode(DiscoClawPosted.self, from: body), let answerID = reply.assistantMessageId else {
                return fail(id, "\(name) took the message but named no answer")
            }
            perform(book.posted(id, answerID: answerID, userSeq: reply.seq, now: clock.nowMillis()))
            // Its answer may have run while no socket listened: the catch-up finds it.
            if turns[id] != nil, turn.epoch != epoch || !link.isReady { requestSync() }
        case .answered(404, _) where !turn.remapped:
            logger.notice(
                "upstream conversation gone; starting a new one",
                metadata: ["account": "\(name)", "conversation": "\(turn.conversationID)"]
            )
            if stored.conversations[turn.conversationID] == upstream {
                stored.conversations[turn.conversationID] = nil
                writer.save(stored)
            }
            turns[id]?.remapped = true
            proceed(id)
        case .answered(let status, let body) where !Self.isTransient(status):
            if status == 401 { link.tokenRefused() }
            fail(id, "\(name) refused the message: \(status) \(DiscoClawREST.errorText(body) ?? "")")
        case .answered, .failed:
            guard turn.attempts < Self.maxAttempts else { return fail(id, "\(name) did not take the message: \(Self.describe(outcome))") }
            retryLater(attempt: turn.attempts) { [weak self] in self?.post(id, in: upstream) }
        }
    }

    /// Waits between tries of one REST call: 1 s, 2 s, 4 s, then 8 s, each ±20 %.
    static let restBackoff = Backoff(minMillis: 1_000, maxMillis: 8_000)

    /// Runs `job` after attempt `attempt` failed.
    func retryLater(attempt: Int, _ job: @escaping () -> Void) {
        loop.schedule(afterMillis: Self.restBackoff.delay(afterAttempt: attempt, random: Backoff.systemRandom), job)
    }

    /// Statuses worth another try: the server is busy, restarting or behind a failing proxy.
    static func isTransient(_ status: Int) -> Bool { status == 408 || status == 429 || status >= 500 }

    static func describe(_ outcome: DiscoClawREST.Outcome) -> String {
        switch outcome {
        case .answered(let status, let body): "\(status) \(DiscoClawREST.errorText(body) ?? "")"
        case .failed(let reason): reason
        }
    }

    func fail(_ id: String, _ reason: String) {
        book.forget(id)
        turns[id] = nil
        logger.warning("DiscoClaw upstream turn failed", metadata: ["account": "\(name)", "reason": "\(reason)"])
        sinks.emit(.failed(reason), to: id)
    }

    /// What the link asks of the account.
    private func perform(_ own: DiscoClawLinkMachine.Own) {
        switch own {
        case .register:
            register()
        case .catchUp:
            // Answers are only sure to have been heard on the socket open when their `POST` went out.
            epoch += 1
            book.socketOpened()
            catchUpForLink()
        case .event(let event):
            perform(book.receive(event, now: clock.nowMillis()))
        case .tick(let now):
            book.expire(now: now)
        }
    }

    func perform(_ actions: [DiscoClawTurnBook.Action]) {
        for action in actions {
            if action.event.endsTurn { turns[action.turnID] = nil }
            sinks.emit(action.event, to: action.turnID)
        }
    }
}
