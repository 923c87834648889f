/// The open buffers in display order; a buffer's number is its position, from 1.
///
/// Order: buffers are grouped by backend, groups sorted by backend name (case-insensitive; buffers
/// without a backend last). Inside a group, buffers listed together (the first session list, or
/// several new ones at once) are sorted by `updatedAt`, newest first, then name, then key. Numbers
/// are stable: activity never reorders; a buffer added later goes to the end of its backend's group
/// (a new group goes where its name sorts); closing one moves the ones after it up by one.
public struct BufferList: Sendable, Equatable {
    public private(set) var buffers: [ChatBuffer] = []
    /// Closed here: session lists do not bring them back; activity in them does.
    public private(set) var closedKeys: Set<String> = []

    public init() {}

    public var count: Int { buffers.count }
    public var isEmpty: Bool { buffers.isEmpty }
    public var keys: [String] { buffers.map(\.key) }

    public func index(of key: String) -> Int? { buffers.firstIndex { $0.key == key } }
    /// 1-based.
    public func number(of key: String) -> Int? { index(of: key).map { $0 + 1 } }
    public func key(number: Int) -> String? { buffers.indices.contains(number - 1) ? buffers[number - 1].key : nil }
    public subscript(key: String) -> ChatBuffer? { index(of: key).map { buffers[$0] } }

    /// Runs `body` on the buffer with `key`; `nil` when there is none.
    @discardableResult
    public mutating func update<Result>(_ key: String, _ body: (inout ChatBuffer) -> Result) -> Result? {
        guard let index = index(of: key) else { return nil }
        return body(&buffers[index])
    }

    /// Adds buffers for the sessions not open and not closed here, in the order described above;
    /// returns their keys. Sessions already open are left alone.
    @discardableResult
    public mutating func addNew(_ sessions: [SessionSummary]) -> [String] {
        var seen = Set(keys).union(closedKeys)
        let fresh = sessions.filter { seen.insert($0.key).inserted }.sorted(by: Self.listedBefore)
        for session in fresh { add(ChatBuffer(session: session)) }
        return fresh.map(\.key)
    }

    /// Adds one buffer at the end of its backend's group (reopening it if it was closed).
    public mutating func add(_ buffer: ChatBuffer) {
        guard index(of: buffer.key) == nil else { return }
        closedKeys.remove(buffer.key)
        let group = Self.groupName(buffer.backend)
        if let last = buffers.lastIndex(where: { Self.groupName($0.backend) == group }) {
            buffers.insert(buffer, at: last + 1)
        } else {
            let position = buffers.firstIndex { Self.groupSortsBefore(group, Self.groupName($0.backend)) } ?? buffers.count
            buffers.insert(buffer, at: position)
        }
    }

    /// Removes a buffer (the conversation stays on the server); returns where it was.
    @discardableResult
    public mutating func close(_ key: String) -> Int? {
        guard let index = index(of: key) else { return nil }
        buffers.remove(at: index)
        closedKeys.insert(key)
        return index
    }

    /// The buffer `offset` places after `key`, wrapping round; the first or last one when `key` is `nil`.
    public func neighbour(of key: String?, offset: Int) -> String? {
        guard !buffers.isEmpty else { return nil }
        guard let key, let index = index(of: key) else { return offset >= 0 ? buffers.first?.key : buffers.last?.key }
        return buffers[((index + offset) % count + count) % count].key
    }

    /// `/buffer name`: a buffer whose name is `name` (case-insensitive), else the next one after
    /// `current` (wrapping round) whose name or key starts with it.
    public func match(name: String, after current: String?) -> String? {
        let wanted = name.lowercased()
        if let exact = buffers.first(where: { $0.displayName.lowercased() == wanted }) { return exact.key }
        let start = current.flatMap { index(of: $0) }.map { $0 + 1 } ?? 0
        for step in 0..<count {
            let buffer = buffers[(start + step) % count]
            if buffer.displayName.lowercased().hasPrefix(wanted) || buffer.key.lowercased().hasPrefix(wanted) { return buffer.key }
        }
        return nil
    }

    /// The buffers with their numbers, cut into backend groups (for the buffer list on the left).
    public var groups: [(backend: String?, buffers: [(number: Int, buffer: ChatBuffer)])] {
        var result: [(backend: String?, buffers: [(number: Int, buffer: ChatBuffer)])] = []
        for (index, buffer) in buffers.enumerated() {
            if let last = result.last, Self.groupName(last.backend) == Self.groupName(buffer.backend) {
                result[result.count - 1].buffers.append((index + 1, buffer))
            } else {
                result.append((buffer.backend, [(index + 1, buffer)]))
            }
        }
        return result
    }

    static func groupName(_ backend: String?) -> String? {
        backend.flatMap { $0.isEmpty ? nil : $0.lowercased() }
    }

    static func groupSortsBefore(_ lhs: String?, _ rhs: String?) -> Bool {
        switch (lhs, rhs) {
        case (let lhs?, let rhs?): return lhs < rhs
        case (.some, nil): return true
        default: return false
        }
    }

    static func listedBefore(_ lhs: SessionSummary, _ rhs: SessionSummary) -> Bool {
        let (left, right) = (groupName(lhs.backend), groupName(rhs.backend))
        if left != right { return groupSortsBefore(left, right) }
        if lhs.updatedAt != rhs.updatedAt { return lhs.updatedAt > rhs.updatedAt }
        let (leftName, rightName) = ((lhs.displayName ?? lhs.key).lowercased(), (rhs.displayName ?? rhs.key).lowercased())
        return leftName != rightName ? leftName < rightName : lhs.key < rhs.key
    }
}
