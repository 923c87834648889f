import Logging

/// Something the core tells bridges about a device.
public enum DeviceEvent: Sendable, Equatable {
    /// Revoked or denylisted: close its sockets and stop its work.
    case cutOff(deviceID: String)
    /// Its record changed (e.g. its admin flag): live sockets follow it.
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
    private let journal: DeviceJournal
    private let loop: any LoopScheduler
    private let clock: any Clock
    private let logger: Logger
    private let seenFlushMillis: Int
    /// Last-seen times not written yet, newest per device.
    private var seenPending: [String: Int64] = [:]
    private var observers: [(DeviceEvent) -> Void] = []

    init(journal: DeviceJournal, loop: any LoopScheduler, clock: any Clock, logger: Logger, seenFlushMillis: Int) {
        self.journal = journal
        self.loop = loop
        self.clock = clock
        self.logger = logger
        self.seenFlushMillis = seenFlushMillis
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
        journal.updateDevice(request, change, completion: completion)
    }

    /// The device was just seen (it authenticated, or a request of it arrived). Written at most
    /// once per device and flush interval, since nothing waits for it.
    public func seen(_ deviceID: String) {
        if seenPending.isEmpty { loop.schedule(afterMillis: seenFlushMillis) { [weak self] in self?.flushSeen() } }
        seenPending[deviceID] = clock.nowMillis()
    }

    private func flushSeen() {
        let seen = seenPending
        seenPending = [:]
        if !seen.isEmpty { journal.recordSeen(seen) }
    }

    /// Writes what `seen` holds now (the relay is stopping).
    public func flush() { flushSeen() }

    /// Bridges hear about cut-offs and changed records here. Loop thread.
    public func observe(_ observer: @escaping (DeviceEvent) -> Void) { observers.append(observer) }

    /// The device was revoked or denylisted (by the operator, or by a bridge for its own
    /// protocol): every bridge closes its sockets and stops its work.
    public func cutOff(_ deviceID: String) {
        logger.info("device cut off (revoked or denylisted); closing its sockets", metadata: ["device": "\(deviceID)"])
        publish(.cutOff(deviceID: deviceID))
    }

    /// The device's record changed outside the relay's bridges (the operator CLI): it is read
    /// again and every bridge follows it.
    public func refresh(_ deviceID: String) {
        journal.device(id: deviceID) { [weak self] result in
            guard case .success(let device?) = result else { return }
            self?.publish(.changed(device))
        }
    }

    private func publish(_ event: DeviceEvent) {
        for observer in observers { observer(event) }
    }
}
