import Logging

/// Something the core tells bridges about a device.
public enum DeviceEvent: Sendable, Equatable {
    /// Revoked or denylisted: close its sockets and stop its work.
    case cutOff(deviceID: String)
    /// Its record changed (its admin flag, or its status: allowed again): live sockets follow it.
    case changed(DeviceRecord)
}

/// Every device of every protocol: records, per-role tokens, pairing requests, last seen. Bridges
/// read and change devices only through it; a protocol's rules (who may pair, which token a
/// connect gets) are pure functions over a `DeviceSnapshot` that `update` applies atomically.
///
/// - Important: loop thread only.
public final class Devices {
    /// Pending pairing requests of every protocol.
    public let pairing: PairingRequests
    let journal: DeviceJournal
    let loop: any LoopScheduler
    let clock: any Clock
    let logger: Logger
    private let seenFlushMillis: Int
    /// Last-seen times not written yet, newest per device.
    private var seenPending: [String: Int64] = [:]
    /// When each device's last-seen time was last written, within the flush interval.
    private var written: [String: Int64] = [:]
    private var observers: [(DeviceEvent) -> Void] = []
    /// The approved devices of the protocols whose clients present a bearer token on every
    /// request, kept in memory by token, so a request is authenticated without a read
    /// (`Devices+Bearers.swift`).
    var bearers: BearerIndex
    /// In a cluster: other nodes pair and revoke devices too, so a token missing here is read
    /// from the store, and the index is read again every `refreshMillis`.
    let shared: Bool
    let refreshMillis: Int
    /// Token hashes being read from the store, with who waits for each.
    var lookups: [String: [(DeviceRecord?) -> Void]] = [:]
    /// The lookups reached `maxLookups` (and that was logged) since they last drained.
    var lookupsFull = false
    var refreshing = false
    var refreshScheduled = false

    init(
        journal: DeviceJournal,
        loop: any LoopScheduler,
        clock: any Clock,
        logger: Logger,
        seenFlushMillis: Int,
        shared: Bool = false,
        refreshMillis: Int = 2_000,
        bearerLimits: BearerIndex.Limits = BearerIndex.Limits()
    ) {
        self.journal = journal
        self.loop = loop
        self.clock = clock
        self.logger = logger
        self.seenFlushMillis = seenFlushMillis
        self.shared = shared
        self.refreshMillis = refreshMillis
        bearers = BearerIndex(limits: bearerLimits)
        pairing = PairingRequests(journal: journal, loop: loop, clock: clock, logger: logger)
    }

    /// A device by id, nil when the relay does not know it.
    public func find(_ deviceID: String, completion: @escaping (Result<DeviceRecord?, any Error>) -> Void) {
        journal.device(id: deviceID, completion: completion)
    }

    /// Every device, or those of one protocol, oldest first.
    public func list(protocolName: String? = nil, completion: @escaping (Result<[DeviceRecord], any Error>) -> Void) {
        journal.devices(protocolName: protocolName, completion: completion)
    }

    /// Reads the device (and what `request` asks for besides), runs `change` on it and stores what
    /// it changed, atomically; `completion` gets `change`'s result once that is durable.
    ///
    /// - Important: `change` runs on the journal's writer: it may only compute on its arguments.
    public func update<R: Sendable>(
        _ request: DeviceSnapshot.Request,
        _ change: @escaping @Sendable (inout DeviceSnapshot) throws -> R,
        completion: @escaping (Result<R, any Error>) -> Void
    ) {
        // Last-seen times go first, so the change sees every sighting so far (the journal runs
        // writes in order).
        flushSeen()
        journal.updateDevice(
            request,
            { snapshot in (try change(&snapshot), snapshot.device) },
            completion: { [weak self] result in
                if case .success(let (_, device?)) = result { self?.bearers.put(device) }
                completion(result.map(\.0))
            }
        )
    }

    /// The device was just seen (it authenticated, or a request of it arrived). The first sighting
    /// is written at once; later ones at most once per device and flush interval, since nothing
    /// waits for them.
    public func seen(_ deviceID: String) {
        let now = clock.nowMillis()
        if let last = written[deviceID], now - last < Int64(seenFlushMillis) {
            if seenPending.isEmpty { loop.schedule(afterMillis: seenFlushMillis) { [weak self] in self?.flushSeen() } }
            seenPending[deviceID] = now
            bearers.seen(deviceID, at: now)
            return
        }
        written[deviceID] = now
        bearers.seen(deviceID, at: now)
        journal.recordSeen([deviceID: now])
    }

    private func flushSeen() {
        let seen = seenPending
        seenPending = [:]
        let now = clock.nowMillis()
        written = written.filter { now - $0.value < Int64(seenFlushMillis) }
        guard !seen.isEmpty else { return }
        for (deviceID, millis) in seen { written[deviceID] = millis }
        journal.recordSeen(seen)
    }

    /// Writes what `seen` holds now (the relay is stopping) and forgets old sightings.
    public func flush() { flushSeen() }

    /// Bridges hear about cut-offs and changed records here. Loop thread.
    public func observe(_ observer: @escaping (DeviceEvent) -> Void) { observers.append(observer) }

    /// The device was revoked or denylisted (by the operator, or by a bridge for its own
    /// protocol): every bridge closes its sockets and stops its work.
    public func cutOff(_ deviceID: String) {
        logger.info("device cut off (revoked or denylisted); closing its sockets", metadata: ["device": "\(deviceID)"])
        bearers.remove(deviceID)
        publish(.cutOff(deviceID: deviceID))
    }

    /// The device's record changed outside the relay's bridges (the operator CLI): it is read
    /// again and every bridge follows it.
    public func refresh(_ deviceID: String) {
        journal.device(id: deviceID) { [weak self] result in
            guard case .success(let device?) = result else { return }
            self?.bearers.put(device)
            self?.publish(.changed(device))
        }
    }

    func publish(_ event: DeviceEvent) {
        for observer in observers { observer(event) }
    }
}
