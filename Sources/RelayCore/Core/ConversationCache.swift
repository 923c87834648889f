/// The conversations read or written lately, by id and by key, up to a limit: past it the least
/// recently used one that nothing pins is forgotten (the journal has them all).
///
/// Recency is a tick per use; `order` maps each entry's latest tick to its id, so the oldest entry
/// is found by walking ticks upward from the last one evicted, skipping ticks whose entry was used
/// again since (each tick is skipped once: amortized O(1) per use).
struct ConversationCache {
    private struct UserKey: Hashable {
        var userID: String
        var key: ConversationKey
    }

    private struct Entry {
        var conversation: Conversation
        var tick: UInt64
    }

    let limit: Int
    private var entries: [String: Entry] = [:]
    private var byKey: [UserKey: String] = [:]
    private var order: [UInt64: String] = [:]
    private var oldestTick: UInt64 = 0
    private var nextTick: UInt64 = 0
    /// Ids that are not evicted, with how many holders pin each.
    private var pins: [String: Int] = [:]

    init(limit: Int) { self.limit = max(1, limit) }

    var count: Int { entries.count }

    /// The conversation with `id`, now the most recently used.
    mutating func conversation(id: String) -> Conversation? {
        guard let entry = entries[id] else { return nil }
        touch(id, entry.tick)
        return entry.conversation
    }

    /// The conversation `key` names for `userID`, now the most recently used.
    mutating func conversation(_ key: ConversationKey, userID: String) -> Conversation? {
        byKey[UserKey(userID: userID, key: key)].flatMap { conversation(id: $0) }
    }

    func contains(id: String) -> Bool { entries[id] != nil }

    /// Stores `conversation` (new, or a newer version) as the most recently used, then forgets
    /// the oldest unpinned entries past the limit.
    mutating func remember(_ conversation: Conversation) {
        if let entry = entries[conversation.id] {
            order.removeValue(forKey: entry.tick)
        }
        nextTick += 1
        entries[conversation.id] = Entry(conversation: conversation, tick: nextTick)
        order[nextTick] = conversation.id
        for key in conversation.keys { byKey[UserKey(userID: conversation.userID, key: key)] = conversation.id }
        evictPastLimit()
    }

    /// Changes a cached conversation in place (no change in recency); nothing when it is not cached.
    mutating func update(id: String, _ change: (inout Conversation) -> Void) {
        guard entries[id] != nil else { return }
        change(&entries[id]!.conversation)
    }

    mutating func remove(id: String) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        order.removeValue(forKey: entry.tick)
        for key in entry.conversation.keys {
            let userKey = UserKey(userID: entry.conversation.userID, key: key)
            if byKey[userKey] == id { byKey.removeValue(forKey: userKey) }
        }
    }

    /// Keeps `id` (cached now or later) from being evicted until as many `unpin` calls.
    mutating func pin(id: String) { pins[id, default: 0] += 1 }

    mutating func unpin(id: String) {
        guard let count = pins[id] else { return }
        pins[id] = count > 1 ? count - 1 : nil
        if count == 1 { evictPastLimit() }
    }

    private mutating func touch(_ id: String, _ tick: UInt64) {
        guard tick != nextTick else { return }
        order.removeValue(forKey: tick)
        nextTick += 1
        entries[id]?.tick = nextTick
        order[nextTick] = id
    }

    /// Forgets the least recently used entries until the limit holds, passing over pinned ones
    /// (they count as used now); stops when only pinned entries are left.
    private mutating func evictPastLimit() {
        var passedOver = 0
        while entries.count > limit, passedOver < entries.count {
            while order[oldestTick] == nil { oldestTick += 1 }
            let id = order[oldestTick]!
            if pins[id] != nil {
                touch(id, oldestTick)
                passedOver += 1
            } else {
                remove(id: id)
            }
        }
    }
}
