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
    private let clock: any Clock
    /// Devices whose queue is being read.
    private var draining: Set<String> = []
    /// Devices that asked for a drain while one was running.
    private var drainAgain: [String: DeviceEndpoint] = [:]
    /// The last entry handed to an endpoint, and the last one known written, per device.
    private var handedOut: [String: Int64] = [:]
    private var written: [String: Int64] = [:]
    public private(set) var drainedEvents = 0

    init(journal: CoreJournal, presence: Presence, bus: Bus, clock: any Clock) {
        self.journal = journal
        self.presence = presence
        self.bus = bus
        self.clock = clock
    }

    /// The devices of `userID` an event submitted now must be queued for.
    public func targets(userID: String) -> [QueueTarget] { presence.queueTargets(userID: userID) }

    /// Hands a stored durable event out: live to foreground devices, except those it was queued
    /// for at submission; queued now for devices that left the foreground since.
    public func publish(_ event: BusEvent, userID: String, queuedFor targets: [QueueTarget]) {
        let queued = Set(targets.map(\.deviceID))
        bus.publish(event, to: userID, skipping: queued)
        let late = presence.queueTargets(userID: userID).filter { !queued.contains($0.deviceID) }
        if !late.isEmpty, let item = QueueItem(event) { journal.enqueue(item, now: clock.nowMillis(), queue: late) }
    }

    /// Sends the device's queue to `endpoint`, oldest first, and deletes what was written.
    public func drain(deviceID: String, to endpoint: DeviceEndpoint) {
        guard !draining.contains(deviceID) else {
            drainAgain[deviceID] = endpoint
            return
        }
        draining.insert(deviceID)
        let after = handedOut[deviceID] ?? 0
        journal.queued(deviceID: deviceID, after: after, now: clock.nowMillis()) { [weak self, weak endpoint] result in
            guard let self else { return }
            draining.remove(deviceID)
            if case .success(let events) = result, let last = events.last, let endpoint {
                handedOut[deviceID] = last.id
                drainedEvents += events.count
                endpoint.deliverQueued(events) { [weak self] in
                    guard let self else { return }
                    written[deviceID] = max(written[deviceID] ?? 0, last.id)
                    journal.dequeue(deviceID: deviceID, through: last.id)
                }
            }
            if let again = drainAgain.removeValue(forKey: deviceID) { drain(deviceID: deviceID, to: again) }
        }
    }

    /// An endpoint of the device went away: whatever was handed to it and not written is due again.
    public func endpointClosed(deviceID: String) {
        if let confirmed = written[deviceID] { handedOut[deviceID] = confirmed } else { handedOut.removeValue(forKey: deviceID) }
    }

    func purge() { journal.purgeQueues(now: clock.nowMillis()) }
}
