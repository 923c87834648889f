import Logging
import RelayCore
import RelayTesting

/// A device socket that records what it was sent.
final class RecordingEndpoint: DeviceEndpoint {
    let deviceID: String
    /// The conversations it listens to; nil = all.
    var listening: Set<String>?
    var conversations: Set<String>? { listening }
    var events: [BusEvent] = []
    var queued: [QueuedEvent] = []
    /// Every message it got, live or from its queue, in the order it got them.
    var arrivals: [ChatEvent] = []
    /// When false, queued deliveries are held unwritten (a socket that never flushed).
    var writes = true
    private var pendingWrites: [() -> Void] = []

    init(deviceID: String) { self.deviceID = deviceID }

    func deliver(_ event: BusEvent) {
        events.append(event)
        if case .message(let message) = event { arrivals.append(message) }
    }

    func deliverQueued(_ events: [QueuedEvent], written: @escaping () -> Void) {
        queued += events
        for case .message(let message) in events.map(\.item) { arrivals.append(message) }
        if writes { written() } else { pendingWrites.append(written) }
    }

    /// Writes what was held back (`writes = false`).
    func flushWrites() {
        let held = pendingWrites
        pendingWrites = []
        for written in held { written() }
    }

    var messages: [ChatEvent] {
        events.compactMap { if case .message(let event) = $0 { event } else { nil } }
    }

    var failures: [TurnFailure] {
        events.compactMap { if case .turnFailed(let failure) = $0 { failure } else { nil } }
    }

    var typing: [Bool] {
        events.compactMap { if case .assistantTyping(_, let active) = $0 { active } else { nil } }
    }

    var streamed: [String] {
        events.compactMap { if case .streaming(let progress) = $0 { progress.content } else { nil } }
    }
}

/// A hub over memory with one scripted backend, one user and one conversation ready.
final class CoreFixture {
    let loop = ManualLoop()
    let journal: MemoryJournal
    let backend = ScriptedBackend(name: "scripted")
    /// A second backend a conversation can be bound to.
    let other = ScriptedBackend(name: "other")
    let hub: RelayHub
    let user = "user-1"
    var conversation: Conversation!
    private var sockets: UInt64 = 0

    init(settings: RelayHub.Settings = RelayHub.Settings()) {
        journal = MemoryJournal(loop: loop)
        hub = RelayHub(
            journal: journal,
            router: Router(backends: [backend, other], defaultBackend: nil),
            loop: loop,
            clock: loop.clock,
            logger: Logger(label: "test"),
            settings: settings
        )
        conversation = resolve(.main)
    }

    func resolve(_ key: ConversationKey, draft: ConversationDraft = ConversationDraft()) -> Conversation {
        var resolved: Conversation?
        hub.conversations.resolve(key, userID: user, draft: draft) { resolved = try? $0.get() }
        loop.runUntilIdle()
        return resolved!
    }

    /// A connected device: a foreground endpoint of `user`.
    @discardableResult
    func connect(_ deviceID: String, delivery: MissedDelivery = .replay, user: String? = nil) -> (RecordingEndpoint, UInt64) {
        sockets += 1
        let endpoint = RecordingEndpoint(deviceID: deviceID)
        hub.attach(endpoint, socket: sockets, userID: user ?? self.user, protocolName: "test", delivery: delivery)
        loop.runUntilIdle()
        return (endpoint, sockets)
    }

    func message(_ text: String, device: String, clientID: String? = nil, conversation: Conversation? = nil) -> UserMessage {
        UserMessage(
            conversationID: (conversation ?? self.conversation).id,
            userID: user,
            deviceID: device,
            clientID: clientID ?? "c_\(text)",
            content: text
        )
    }

    /// Submits and runs the loop until the store answered.
    @discardableResult
    func submit(_ message: UserMessage, policy: TurnPolicy = TurnPolicy()) -> SubmitOutcome {
        var outcome: SubmitOutcome?
        hub.turns.submit(message, policy: policy) { outcome = $0 }
        loop.runUntilIdle()
        return outcome!
    }

    /// Lets the backend's events reach the runner.
    func emit(_ event: TurnEvent, run index: Int) {
        backend.runs[index].emit(event)
        loop.runUntilIdle()
    }
}

extension SubmitOutcome {
    var isAccepted: Bool { if case .accepted = self { true } else { false } }
    var isQueueFull: Bool { if case .queueFull = self { true } else { false } }
}
