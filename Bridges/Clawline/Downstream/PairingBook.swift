import RelayCore
import RelayTransport

/// Pending pairing requests, in memory only (the protocol does not keep them across restarts).
struct PairingBook {
    struct Entry {
        var deviceID: String
        var claimedName: String?
        var deviceInfo: JSONValue
        var createdAt: Int64
        var expiresAt: Int64
        /// The socket waiting for `pair_result`, if it is still connected.
        weak var waiter: ClawlineSession?
        var timer: TimerID?
    }

    enum Admission {
        case added
        /// The device asked again: the original entry and its TTL stand.
        case alreadyPending
        case full
    }

    let ttlMillis: Int64
    let capacity: Int
    private(set) var entries: [String: Entry] = [:]

    init(ttlMillis: Int64, capacity: Int) {
        self.ttlMillis = ttlMillis
        self.capacity = capacity
    }

    var count: Int { entries.count }

    /// Entries oldest first.
    var ordered: [Entry] { entries.values.sorted { $0.createdAt < $1.createdAt } }

    mutating func admit(_ request: ClientFrame.PairRequest, waiter: ClawlineSession, now: Int64) -> Admission {
        if entries[request.deviceID] != nil {
            entries[request.deviceID]?.waiter = waiter
            return .alreadyPending
        }
        guard entries.count < capacity else { return .full }
        entries[request.deviceID] = Entry(
            deviceID: request.deviceID,
            claimedName: request.claimedName,
            deviceInfo: request.deviceInfo,
            createdAt: now,
            expiresAt: now + ttlMillis,
            waiter: waiter,
            timer: nil
        )
        return .added
    }

    mutating func setTimer(_ timer: TimerID, for deviceID: String) {
        entries[deviceID]?.timer = timer
    }

    func entry(_ deviceID: String) -> Entry? { entries[deviceID] }

    mutating func remove(_ deviceID: String) -> Entry? { entries.removeValue(forKey: deviceID) }

    mutating func detach(deviceID: String, session: ClawlineSession) {
        if entries[deviceID]?.waiter === session { entries[deviceID]?.waiter = nil }
    }
}
