/// How much happened in a buffer the user is not looking at.
public enum ActivityLevel: Int, Comparable, Sendable {
    /// Something happened that is already read: a message sent from another device, or unread
    /// messages read elsewhere. Shown dim.
    case low = 1
    /// New messages not yet read.
    case message = 2

    public static func < (lhs: ActivityLevel, rhs: ActivityLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Buffers with activity other than the active one, in the order their activity started.
public struct Hotlist: Sendable, Equatable {
    public struct Entry: Equatable, Sendable {
        public var key: String
        public var level: ActivityLevel

        public init(key: String, level: ActivityLevel) {
            self.key = key
            self.level = level
        }
    }

    public private(set) var entries: [Entry] = []

    public init() {}

    /// Adds `key` at the end, or raises its level where it already is.
    public mutating func record(_ key: String, level: ActivityLevel) {
        if let index = entries.firstIndex(where: { $0.key == key }) {
            entries[index].level = max(entries[index].level, level)
        } else {
            entries.append(Entry(key: key, level: level))
        }
    }

    /// Lowers `key` to `level` if it is listed higher (its messages were read elsewhere).
    public mutating func lower(_ key: String, to level: ActivityLevel) {
        guard let index = entries.firstIndex(where: { $0.key == key }) else { return }
        entries[index].level = min(entries[index].level, level)
    }

    public mutating func remove(_ key: String) {
        entries.removeAll { $0.key == key }
    }

    public func level(of key: String) -> ActivityLevel? {
        entries.first { $0.key == key }?.level
    }

    /// Where Alt-A goes: the oldest entry of the highest level present.
    public var next: String? {
        guard let top = entries.map(\.level).max() else { return nil }
        return entries.first { $0.level == top }?.key
    }
}
