import RelayCore
import RelayTesting
import Testing

/// A device socket that notes, as each queued event is handed to it, the conversation's Companion
/// session key the core knows then (what a bridge renders the event with).
private final class KeyReadingEndpoint: DeviceEndpoint {
    let deviceID: String
    let known: Conversations
    var keys: [String?] = []

    init(deviceID: String, known: Conversations) {
        self.deviceID = deviceID
        self.known = known
    }

    func deliver(_ event: BusEvent) {}

    func deliverQueued(_ events: [QueuedEvent], written: @escaping () -> Void) {
        keys += events.map { known.key(of: $0.item.conversationID, scheme: "companion") }
        written()
    }
}

/// The conversation cache may forget any entry: a turn, a relay command, queue targets and drains
/// read the conversation itself.
@Suite struct ConversationCacheTests {
    static let limit = 4
    static let companionQueue = MissedDelivery.queue(ttlMillis: 60_000, capacity: 100, scheme: "companion")

    private func core() -> CoreFixture { CoreFixture(settings: RelayHub.Settings(conversationCacheLimit: Self.limit)) }

    /// A conversation bound to backend `other`, with a working directory and a backend session.
    private func boundConversation(_ core: CoreFixture) -> Conversation {
        let bound = core.resolve(ConversationKey("companion.dir", "/srv/app"), draft: ConversationDraft(workingDirectory: "/srv/app"))
        var edited: Conversation?
        core.hub.conversations.edit(id: bound.id, .rebind(backend: "other")) { edited = try? $0.get() }
        core.loop.runUntilIdle()
        #expect(edited?.backend == "other")
        core.hub.conversations.setBackendSession("sess-7", of: bound.id)
        core.loop.runUntilIdle()
        return bound
    }

    /// Resolves three times the cache's limit of other conversations.
    private func overflow(_ core: CoreFixture) {
        for index in 0..<(Self.limit * 3) { _ = core.resolve(.session("filler-\(index)")) }
    }

    @Test func aTurnRunsOnItsConversationsBackendWithItsDirectoryAndSessionAfterTheCacheOverflowed() throws {
        let core = core()
        core.connect("phone")
        let bound = boundConversation(core)
        overflow(core)
        #expect(core.submit(core.message("hello", device: "phone", conversation: bound)).isAccepted)
        #expect(core.backend.runs.isEmpty, "the default backend ran the bound conversation's turn")
        let run = try #require(core.other.runs.first)
        #expect(run.request.conversationID == bound.id && run.request.text == "hello")
        #expect(run.request.workingDirectory == "/srv/app")
        #expect(run.request.backendSession == "sess-7")
    }

    @Test func theBackendCommandNamesTheBoundBackendAfterTheCacheOverflowed() {
        let core = core()
        let (phone, _) = core.connect("phone")
        let bound = boundConversation(core)
        overflow(core)
        core.submit(core.message("/backend", device: "phone", conversation: bound))
        #expect(phone.messages.last?.content.hasPrefix("This conversation is answered by other.") == true, "\(phone.messages.map(\.content))")
    }

    @Test func theCacheForgetsTheLeastRecentlyUsedConversationOnly() {
        let core = core()
        let (a, b, c) = (core.resolve(.session("a")), core.resolve(.session("b")), core.resolve(.session("c")))
        #expect(core.hub.conversations.cached(id: core.conversation.id) != nil, "main is used again: a is now the oldest")
        let d = core.resolve(.session("d"))
        #expect(core.hub.conversations.cached(id: a.id) == nil)
        for kept in [core.conversation!, b, c, d] { #expect(core.hub.conversations.cached(id: kept.id) == kept) }
    }

    @Test func aConversationWithARunningTurnStaysCachedSoItsQueuedDevicesGetTheAnswer() {
        let core = core()
        let session = core.resolve(ConversationKey("companion", "s-1"))
        core.connect("phone")
        core.connect("tablet", delivery: Self.companionQueue)
        core.hub.presence.signal(.backgrounded, deviceID: "tablet")
        core.submit(core.message("hi", device: "phone", conversation: session))
        overflow(core)
        core.emit(.final("answer"), run: 0)
        let queued = core.journal.queue(of: "tablet").compactMap { if case .message(let event) = $0 { event.content } else { nil } }
        #expect(queued == ["hi", "answer"])
    }

    @Test func aQueueIsHandedOutWithTheKeysOfConversationsTheCacheForgot() {
        let core = core()
        let session = core.resolve(ConversationKey("companion", "s-1"))
        core.connect("phone")
        let (tablet, socket) = core.connect("tablet", delivery: Self.companionQueue)
        core.hub.detach(tablet, socket: socket, userID: core.user)
        core.submit(core.message("hi", device: "phone", conversation: session))
        core.emit(.final("answer"), run: 0)
        overflow(core)
        #expect(core.hub.conversations.cached(id: session.id) == nil)

        let returning = KeyReadingEndpoint(deviceID: "tablet", known: core.hub.conversations)
        core.hub.attach(returning, socket: 99, userID: core.user, protocolName: "test", delivery: Self.companionQueue)
        core.loop.runUntilIdle()
        #expect(returning.keys == ["s-1", "s-1"])
    }
}
