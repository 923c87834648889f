/// The approved devices of the protocols whose clients present a bearer token on every request,
/// by the SHA-256 of their token, and the hashes found in no store lately. Pure state: `Devices`
/// feeds it what it writes and reads.
///
/// - Important: loop thread only (it belongs to `Devices`).
struct BearerIndex {
    /// How long a hash the store did not know is answered "unknown" without a read, and how many
    /// such hashes are remembered at most.
    struct Limits {
        var missMillis: Int64 = 30_000
        var maxMisses = 10_000
        /// Reads of unknown hashes in flight at most; past it, an unknown hash is refused unread.
        var maxLookups = 64
    }

    let limits: Limits
    private(set) var protocols: Set<String> = []
    private var byHash: [String: DeviceRecord] = [:]
    private var hashes: [String: String] = [:]
    /// Hashes no store knew, until when that answer holds.
    private var misses: [String: Int64] = [:]
    /// The last local change of each device's entry, counted by `version`: a refresh read that
    /// began before a local change does not undo it.
    private var changedAt: [String: Int] = [:]
    private(set) var version = 0

    init(limits: Limits = Limits()) { self.limits = limits }

    mutating func index(protocol name: String) { protocols.insert(name) }

    func record(tokenHash: String) -> DeviceRecord? { byHash[tokenHash] }

    func hash(ofDevice deviceID: String) -> String? { hashes[deviceID] }

    func records(protocolName: String, userID: String?) -> [DeviceRecord] {
        byHash.values.filter { $0.protocolName == protocolName && (userID == nil || $0.userID == userID) }
            .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    /// The device as it is now (written or read here): indexed when approved with a token,
    /// dropped otherwise. A refresh read that began before this keeps it.
    mutating func put(_ record: DeviceRecord) {
        guard protocols.contains(record.protocolName) else { return }
        version += 1
        changedAt[record.id] = version
        place(record)
    }

    /// The device is cut off here (revoked): dropped at once, whatever a refresh read.
    mutating func remove(_ deviceID: String) {
        version += 1
        changedAt[deviceID] = version
        unplace(deviceID)
    }

    mutating func seen(_ deviceID: String, at millis: Int64) {
        if let hash = hashes[deviceID] { byHash[hash]?.lastSeenAt = millis }
    }

    /// What the store holds for `protocolName` now, read from `since` (the `version` when the
    /// read began): devices changed here since are kept as they are. Returns the devices that
    /// left the index and those that joined it or changed (a name, a user, an admin flag).
    mutating func replace(protocolName: String, with records: [DeviceRecord], since: Int) -> (removed: [String], changed: [DeviceRecord]) {
        var fresh: [String: DeviceRecord] = [:]
        for record in records where record.protocolName == protocolName && record.status == .approved && record.tokenHash != nil {
            fresh[record.id] = record
        }
        let stale = hashes.keys.filter { id in
            fresh[id] == nil && byHash[hashes[id] ?? ""]?.protocolName == protocolName && (changedAt[id] ?? 0) <= since
        }
        for id in stale { unplace(id) }
        var changed: [DeviceRecord] = []
        for record in fresh.values where (changedAt[record.id] ?? 0) <= since {
            let known = hashes[record.id].flatMap { byHash[$0] }
            var merged = record
            merged.lastSeenAt = max(known?.lastSeenAt ?? 0, record.lastSeenAt ?? 0).nonZero
            if known.map({ !$0.sameDevice(as: merged) }) ?? true { changed.append(merged) }
            place(merged)
        }
        return (stale.sorted(), changed.sorted { $0.id < $1.id })
    }

    /// The refresh read from `since` is done, and no other is in flight (one at a time): the
    /// marks of older local changes protect nothing now.
    mutating func settled(since: Int) { changedAt = changedAt.filter { $0.value > since } }

    /// True when `tokenHash` was looked up lately and no store knew it. (Expired ones go when
    /// the cache fills, or when the hash is looked up again.)
    func isKnownMiss(_ tokenHash: String, now: Int64) -> Bool { (misses[tokenHash] ?? now) > now }

    /// Remembers that no store knows `tokenHash`, for `missMillis`; when full, the expired and
    /// then the older half are forgotten.
    mutating func rememberMiss(_ tokenHash: String, now: Int64) {
        if misses.count >= limits.maxMisses {
            misses = misses.filter { $0.value > now }
            if misses.count >= limits.maxMisses {
                let kept = misses.sorted { $0.value > $1.value }.prefix(limits.maxMisses / 2)
                misses = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
            }
        }
        misses[tokenHash] = now + limits.missMillis
    }

    var missCount: Int { misses.count }

    private mutating func place(_ record: DeviceRecord) {
        unplace(record.id)
        guard record.status == .approved, let hash = record.tokenHash else { return }
        byHash[hash] = record
        hashes[record.id] = hash
        misses.removeValue(forKey: hash)
    }

    private mutating func unplace(_ deviceID: String) {
        if let hash = hashes.removeValue(forKey: deviceID) { byHash.removeValue(forKey: hash) }
    }
}

extension DeviceRecord {
    /// The same device as far as a client sees it: everything but when it was last seen.
    func sameDevice(as other: DeviceRecord) -> Bool {
        var other = other
        other.lastSeenAt = lastSeenAt
        other.presence = presence
        return self == other
    }
}

extension Int64 {
    fileprivate var nonZero: Int64? { self == 0 ? nil : self }
}
