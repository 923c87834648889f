/// Which upstream session serves which working directory: one session per directory, as the
/// Companion server itself deduplicates them.
///
/// Entries not used for `idleMillis` are forgotten before the server's own idle timeout (30 min)
/// can close the session under us; past `capacity` the least recently used entry goes.
struct CompanionSessionCache: Sendable {
    /// The key for turns with no working directory (the server picks its default).
    static let noDirectory = ""

    private struct Entry {
        var sessionID: String
        var lastUsed: Int64
    }

    let capacity: Int
    let idleMillis: Int64
    private var entries: [String: Entry] = [:]

    init(capacity: Int = 32, idleMillis: Int64 = 10 * 60 * 1000) {
        self.capacity = max(1, capacity)
        self.idleMillis = idleMillis
    }

    var count: Int { entries.count }

    static func key(_ directory: String?) -> String { directory ?? noDirectory }

    /// The directory's session if one is cached and fresh; marks it used.
    mutating func sessionID(for directory: String?, now: Int64) -> String? {
        let key = Self.key(directory)
        guard let entry = entries[key] else { return nil }
        guard now - entry.lastUsed < idleMillis else {
            entries[key] = nil
            return nil
        }
        entries[key]?.lastUsed = now
        return entry.sessionID
    }

    mutating func store(_ sessionID: String, for directory: String?, now: Int64) {
        let key = Self.key(directory)
        entries[key] = Entry(sessionID: sessionID, lastUsed: now)
        while entries.count > capacity,
            let oldest = entries.filter({ $0.key != key }).min(by: { $0.value.lastUsed < $1.value.lastUsed })?.key
        {
            entries[oldest] = nil
        }
    }

    /// Forgets the directory's entry if it still names `sessionID`.
    mutating func remove(_ sessionID: String, for directory: String?) {
        let key = Self.key(directory)
        if entries[key]?.sessionID == sessionID { entries[key] = nil }
    }

    mutating func removeAll() { entries.removeAll() }
}
