/// The durable per-device queues of events a device missed while it was not in the foreground,
/// and the one place durable events are handed out (live, or queued).
///
/// An event is queued in the same transaction that stores it, for the devices that were away
/// when it was submitted; those devices then get it from their queue only, never live too. A
/// device that went away between submission and commit gets it queued afterwards. A queue is
/// drained in order when its device returns, and entries are deleted once written.
///
/// - Important: loop thread only.
public final class NotificationQueue {
    private let journal: CoreJournal
    private let presence: Presence
    private let bus: Bus
    private let conversations: Conversations
    private let clock: any Clock
    private let pushes: Pushes
    private let cursors: ReadCursors
    /// In a cluster: hands events out in stream order with other nodes' events; nil on a single node.
    private let delivery: ClusterDelivery?
    /// Devices whose queue is being read.
    private var draining: Set<String> = []
    /// Devices that asked for a drain while one was running.
    private var drainAgain: [String: DeviceEndpoint] = [:]
    /// Entries handed to a socket and not yet written, per device.
    private var handedOut: [String: Set<Int64>] = [:]
    /// Entries written whose delete has not committed: a read submitted before the delete still
    /// sees them, so no drain may hand them out again until then.
    private var deleting: [String: Set<Int64>] = [:]
    public private(set) var drainedEvents = 0

    init(
        journal: CoreJournal,
        presence: Presence,
        bus: Bus,
        conversations: Conversations,
        pushes: Pushes,
        cursors: ReadCursors,
        delivery: ClusterDelivery?,
        clock: any Clock
    ) {
        self.delivery = delivery
        self.journal = journal
        self.presence = presence
        self.bus = bus
        self.conversations = conversations
        self.pushes = pushes
        self.cursors = cursors
        self.clock = clock
    }

    /// The devices of `userID` an event of `conversationID` submitted now must be queued for: those
    /// that keep a queue, follow the conversation, and do not take it live.
    public func targets(userID: String, conversationID: String) -> [QueueTarget] {
        presence.queueDevices(userID: userID).compactMap { deviceID, entry in
            guard case .queue(let ttl, let capacity, let scheme) = entry.delivery else { return nil }
            if let scheme, conversations.key(of: conversationID, scheme: scheme) == nil { return nil }
            if entry.presence.state == .foreground, bus.isListening(deviceID: deviceID, to: conversationID) { return nil }
            return QueueTarget(deviceID: deviceID, ttlMillis: ttl, capacity: capacity)
        }
    }

    /// Hands a stored durable event out: live to the devices that take it, except those it was
    /// queued for at submission; queued now for devices that stopped taking it live since; and
    /// to the pushes of devices that are away (`runMillis`: how long its turn ran). `seqs`: the
    /// seqs of the user's clock its write took (a message's own seq when nil; an accepted
    /// message's range ends at its answer's slot).
    public func publish(_ event: BusEvent, userID: String, queuedFor targets: [QueueTarget], runMillis: Int64 = 0, seqs: ClosedRange<Int64>? = nil) {
        let queued = Set(targets.map(\.deviceID))
        if let delivery, let seqs = seqs ?? event.messageSeq.map({ $0...$0 }) {
            delivery.committed(stream: userID, first: seqs.lowerBound, last: seqs.upperBound, event: event, skipping: queued)
        } else {
            bus.publish(event, to: userID, skipping: queued)
        }
        let late = self.targets(userID: userID, conversationID: event.conversationID).filter { !queued.contains($0.deviceID) }
        if !late.isEmpty, let item = QueueItem(event) { journal.enqueue(item, now: clock.nowMillis(), queue: late) }
        pushes.published(event, userID: userID, runMillis: runMillis)
    }

    /// Hands a durable event another node of the cluster stored to this node's devices: live to
    /// those that take it, queued for those that keep a queue and do not (each node queues for
    /// the devices whose presence it holds). Pushes are the storing node's.
    func handOutRemote(_ event: BusEvent, userID: String) {
        let targets = targets(userID: userID, conversationID: event.conversationID)
        bus.publishHere(event, to: userID, skipping: Set(targets.map(\.deviceID)))
        if !targets.isEmpty, let item = QueueItem(event) { journal.enqueue(item, now: clock.nowMillis(), queue: targets) }
    }

    /// Sends the device's queued events of the conversations `endpoint` listens to, oldest first,
    /// and deletes them once written.
    public func drain(deviceID: String, to endpoint: DeviceEndpoint) {
        guard !draining.contains(deviceID) else {
            drainAgain[deviceID] = endpoint
            return
        }
        draining.insert(deviceID)
        let wanted = endpoint.conversations
        journal.queued(deviceID: deviceID, conversations: wanted, now: clock.nowMillis()) { [weak self, weak endpoint] result in
            guard let self else { return }
            let all = (try? result.get()) ?? []
            // The endpoint renders each event with its conversation's keys: read the ones the
            // cache let go first (inline when none did).
            conversations.loadAll(Set(all.map(\.item.conversationID))) { [weak self, weak endpoint] in
                self?.handOut(all, deviceID: deviceID, to: endpoint)
            }
        }
    }

    private func handOut(_ all: [QueuedEvent], deviceID: String, to endpoint: DeviceEndpoint?) {
        draining.remove(deviceID)
        let taken = (handedOut[deviceID] ?? []).union(deleting[deviceID] ?? [])
        if let endpoint {
            let events = all.filter { !taken.contains($0.id) }
            if !events.isEmpty {
                let ids = events.map(\.id)
                handedOut[deviceID, default: []].formUnion(ids)
                drainedEvents += events.count
                let reads = Self.newestSeqs(events)
                endpoint.deliverQueued(events) { [weak self] in
                    self?.written(ids, deviceID: deviceID)
                    self?.read(reads, deviceID: deviceID)
                }
            }
        }
        if let again = drainAgain.removeValue(forKey: deviceID) { drain(deviceID: deviceID, to: again) }
    }

    private func written(_ ids: [Int64], deviceID: String) {
        handedOut[deviceID]?.subtract(ids)
        if handedOut[deviceID]?.isEmpty == true { handedOut.removeValue(forKey: deviceID) }
        deleting[deviceID, default: []].formUnion(ids)
        journal.dequeue(deviceID: deviceID, ids: ids) { [weak self] in
            guard let self else { return }
            deleting[deviceID]?.subtract(ids)
            if deleting[deviceID]?.isEmpty == true { deleting.removeValue(forKey: deviceID) }
        }
    }

    /// The newest message seq per conversation among `events`.
    private static func newestSeqs(_ events: [QueuedEvent]) -> [String: Int64] {
        var newest: [String: Int64] = [:]
        for case .message(let event) in events.map(\.item) { newest[event.conversationID] = max(newest[event.conversationID] ?? 0, event.seq) }
        return newest
    }

    /// A drained queue was read: pushes it covers on the user's other devices are dropped and the
    /// user's read cursors move.
    private func read(_ newest: [String: Int64], deviceID: String) {
        guard let userID = presence.entries[deviceID]?.userID else { return }
        for (conversationID, seq) in newest.sorted(by: { $0.key < $1.key }) {
            pushes.read(userID: userID, conversationID: conversationID, seq: seq)
            cursors.read(userID: userID, conversationID: conversationID, seq: seq)
        }
    }

    /// An endpoint of the device went away: whatever was handed to it and not written is due again.
    public func endpointClosed(deviceID: String) { handedOut.removeValue(forKey: deviceID) }

    func purge() { journal.purgeQueues(now: clock.nowMillis()) }
}
