import Logging

/// A cluster node's delivery of durable events: every stream's `StreamFollower`, driven by this
/// node's commits, the positions other nodes announce and a periodic resync of the heads of the
/// streams this node has sockets for. Other nodes' events are read from the log and handed to
/// the bus (messages, failures) or to `Conversations` (changes) here; live events cross as they are.
///
/// Without a cluster the hub has none of this and publishes straight to the bus.
///
/// - Important: loop thread only.
public final class ClusterDelivery {
    /// What a follower hands out.
    enum Payload {
        /// A bus event this node stored, for the stream's sockets except devices that got it queued.
        case event(BusEvent, skipping: Set<String>)
        /// A bus event another node stored: this node hands it to its own devices, live or queued.
        case remote(BusEvent)
        /// A conversation another node changed.
        case conversation(Conversation)
    }

    private let link: ClusterLink
    private let bus: Bus
    private let presence: Presence
    private let conversations: Conversations
    private let loop: any LoopScheduler
    private let logger: Logger
    private var followers: [String: StreamFollower<Payload>] = [:]
    private var resyncing = false
    /// Runs after positions from other nodes (or a resync) were taken in: turns waiting for another
    /// node's turn to end ask again.
    var onMoved: (() -> Void)?
    /// What other nodes ask of this one.
    var onControl: ((ClusterControl) -> Void)?
    /// Hands another node's durable event to this node's devices (`NotificationQueue.handOutRemote`).
    var onRemoteEvent: ((BusEvent, String) -> Void)?
    /// True while a change another node made is handed to `Conversations` (it is not this node's to announce).
    private var applyingRemote = false
    /// Catch-up reads asked of the log.
    public private(set) var reads = 0

    init(link: ClusterLink, bus: Bus, presence: Presence, conversations: Conversations, loop: any LoopScheduler, logger: Logger) {
        self.link = link
        self.bus = bus
        self.presence = presence
        self.conversations = conversations
        self.loop = loop
        self.logger = logger
        link.fabric.receive(
            positions: { [weak self] positions in self?.heard(positions) },
            live: { [weak self] event, stream in self?.bus.publishHere(event, to: stream) },
            control: { [weak self] control in self?.onControl?(control) }
        )
        bus.forwardLive = { [weak self] event, stream in self?.link.fabric.sendLive(event, stream: stream) }
    }

    /// Starts the periodic resync.
    func start() {
        loop.schedule(afterMillis: link.resyncMillis) { [weak self] in
            self?.resync()
            self?.start()
        }
    }

    /// This node committed seqs `first...last` of `stream` and hands `event` out (nil: nothing to
    /// hand out, as for a change `Conversations` already announced); other nodes hear the position.
    func committed(stream: String, first: Int64, last: Int64, event: BusEvent?, skipping: Set<String> = []) {
        guard first > 0, last >= first else {
            if let event { bus.publish(event, to: stream, skipping: skipping) }
            return
        }
        link.fabric.announce([StreamPosition(stream: stream, prev: first - 1, last: last)])
        let payloads = event.map { [Payload.event($0, skipping: skipping)] } ?? []
        perform(followers[stream, default: StreamFollower()].local(first: first, last: last, payloads: payloads), stream: stream)
    }

    /// A socket for `stream` arrived here (after its replay). The stream's first reader starts its
    /// follower over from the stream's head: what it skipped while nobody read it here is the
    /// replay's.
    func follow(_ stream: String) {
        guard bus.endpoints(of: stream).count <= 1, followers[stream, default: StreamFollower()].begin() else { return }
        link.journal.streamHeads([stream]) { [weak self] result in
            guard let self else { return }
            let head = (try? result.get())?[stream]
            perform(followers[stream, default: StreamFollower()].start(at: head), stream: stream)
        }
    }

    /// A conversation this node created or changed: its change seqs are delivered here already
    /// (`Conversations` announced it), and other nodes hear the position.
    func changed(_ change: ConversationChange) {
        guard !applyingRemote else { return }
        let changed: [Conversation]
        switch change {
        case .created(let conversation), .conversation(let conversation): changed = [conversation]
        case .reset(let reset, _): changed = [reset.fresh, reset.old].sorted { $0.changeSeq < $1.changeSeq }
        case .read(let cursor):
            link.fabric.send(.readMoved(cursor))
            return
        case .deleted(let conversation):
            link.fabric.send(.conversationDeleted(conversation))
            return
        case .compacted: return
        }
        for conversation in changed {
            committed(stream: conversation.userID, first: conversation.changeSeq, last: conversation.changeSeq, event: nil)
        }
    }

    /// Positions other nodes announced (or repeated, or sent late).
    func heard(_ positions: [StreamPosition]) {
        for position in positions {
            let listened = hasReaders(position.stream)
            perform(followers[position.stream, default: StreamFollower()].heard(position, listened: listened), stream: position.stream)
        }
        onMoved?()
    }

    /// Runs `body`, which hands out what another node changed: `ConversationChanges` observers hear
    /// it here, and it is not announced again.
    func applyingRemote(_ body: () -> Void) {
        applyingRemote = true
        body()
        applyingRemote = false
    }

    /// Reads the heads of the streams with readers here and catches up those that moved unheard.
    /// A stream not followed yet starts at its head (its sockets replayed what came before).
    func resync() {
        guard !resyncing else { return }
        let streams = Set(bus.audiences + presence.queueUsers).sorted()
        guard !streams.isEmpty else {
            onMoved?()
            return
        }
        resyncing = true
        link.journal.streamHeads(streams) { [weak self] result in
            guard let self else { return }
            resyncing = false
            guard case .success(let heads) = result else { return }
            heard(heads.sorted { $0.key < $1.key }.map { StreamPosition(stream: $0.key, prev: $0.value, last: $0.value) })
        }
    }

    /// True when this node has someone for the stream's events: a socket, or a device that keeps a queue.
    private func hasReaders(_ stream: String) -> Bool {
        !bus.endpoints(of: stream).isEmpty || !presence.queueDevices(userID: stream).isEmpty
    }

    /// The follower of `stream` as it stands (tests).
    public func follower(of stream: String) -> (delivered: Int64?, isIdle: Bool)? {
        followers[stream].map { ($0.delivered, $0.isIdle) }
    }

    private func perform(_ actions: [StreamFollower<Payload>.Action], stream: String) {
        for action in actions {
            switch action {
            case .deliver(let payloads):
                for payload in payloads { deliver(payload, stream: stream) }
            case .read(let after, let through): read(stream, after: after, through: through)
            }
        }
    }

    private func read(_ stream: String, after: Int64, through: Int64) {
        reads += 1
        let limit = link.readLimit
        link.journal.streamEntries(stream, after: after, through: through, limit: limit) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let entries):
                let read = entries.map { (seq: $0.seq, payload: Self.payload($0)) }
                perform(followers[stream, default: StreamFollower()].readDone(read, complete: entries.count < limit), stream: stream)
            case .failure(let error):
                followers[stream]?.readFailed()
                logger.warning("could not read a stream's log", metadata: ["stream": "\(stream)", "after": "\(after)", "error": "\(error)"])
            }
        }
    }

    private static func payload(_ entry: StreamEntry) -> Payload {
        switch entry {
        case .message(let event): .remote(.message(event))
        case .failure(let failure, _): .remote(.turnFailed(failure))
        case .conversation(let conversation): .conversation(conversation)
        }
    }

    private func deliver(_ payload: Payload, stream: String) {
        switch payload {
        case .event(let event, let skipping):
            bus.publish(event, to: stream, skipping: skipping)
        case .remote(let event):
            if let onRemoteEvent { onRemoteEvent(event, stream) } else { bus.publishHere(event, to: stream) }
        case .conversation(let conversation):
            // This node's own changes were announced when they were made.
            if let cached = conversations.cached(id: conversation.id), cached.changeSeq >= conversation.changeSeq { return }
            applyingRemote { conversations.updated(conversation) }
        }
    }
}

extension BusEvent {
    /// A stored message's seq; nil for anything else.
    var messageSeq: Int64? {
        if case .message(let event) = self, event.seq > 0 { event.seq } else { nil }
    }
}
