/// The lines of one conversation, kept in ``LineOrder``, each message once.
///
/// - Important: A message id appears at most once. A streaming update, the final message, a live
///   message and a history page all update the entry with the same id in place (or the local echo
///   whose id is the message's `clientID`); a late streaming update never overwrites a final text.
public struct Transcript: Equatable, Sendable {
    public private(set) var lines: [ChatLine] = []
    private var counter = 0

    public init() {}

    /// The highest server seq present.
    public private(set) var newestSeq: Int64?

    /// What an update did.
    public enum Change: Equatable, Sendable {
        case unchanged
        /// A new entry (a message or the start of a streaming answer).
        case added
        /// An entry already there was updated.
        case updated
    }

    public func index(ofID id: String) -> Int? {
        lines.firstIndex { $0.id == id }
    }

    /// A live or final message: replaces the entry with its id (or its client id), or adds it.
    @discardableResult
    public mutating func apply(_ message: ChatMessage) -> Change {
        let existing = index(ofID: message.id) ?? message.clientID.flatMap { index(ofID: $0) }
        let order = message.seq.map { LineOrder(seq: $0, local: 0) } ?? bottomOrder(keeping: existing)
        let line = ChatLine(
            id: message.id,
            seq: message.seq,
            role: message.role,
            text: message.text,
            timestamp: message.timestamp,
            state: .final,
            order: order
        )
        if let existing {
            if lines[existing] == line { return .unchanged }
            lines.remove(at: existing)
            insert(line)
            return .updated
        }
        if let seq = message.seq, seq > newestSeq ?? .min { settleLocalLines() }
        insert(line)
        return .added
    }

    /// The whole text so far of an answer being written.
    @discardableResult
    public mutating func stream(id: String, text: String, timestamp: Int64) -> Change {
        if let existing = index(ofID: id) {
            guard lines[existing].state != .final, lines[existing].state != .local else { return .unchanged }
            if lines[existing].text == text, lines[existing].state == .streaming { return .unchanged }
            lines[existing].text = text
            lines[existing].state = .streaming
            return .updated
        }
        insert(ChatLine(id: id, seq: nil, role: .assistant, text: text, timestamp: timestamp, state: .streaming, order: bottomOrder(keeping: nil)))
        return .added
    }

    /// A page of history (any order). Entries already present are updated by id; a local echo the page
    /// confirms (same client id, or a user message with the same text) and answers interrupted by a
    /// disconnect that the page does not hold are removed, since the page holds their final form.
    /// Returns how many new entries were added.
    @discardableResult
    public mutating func merge(history: [ChatMessage]) -> Int {
        let ids = Set(history.map(\.id))
        let clientIDs = Set(history.compactMap(\.clientID))
        let userTexts = Set(history.filter { $0.role == .user }.map(\.text))
        lines.removeAll { line in
            switch line.state {
            case .interrupted: return !ids.contains(line.id)
            case .pending: return clientIDs.contains(line.id) || userTexts.contains(line.text)
            default: return false
            }
        }
        return history.reduce(0) { added, message in added + (apply(message) == .added ? 1 : 0) }
    }

    /// Adds a line made here (command output, an error) at the end; returns its id. Below lines still
    /// waiting for a seq, it waits at the bottom too, until a newer message arrives and it settles before it.
    @discardableResult
    public mutating func appendLocal(role: ChatRole, text: String, timestamp: Int64) -> String {
        counter += 1
        let id = "local-\(counter)"
        let anchor = lines.last?.order.seq == .max ? Int64.max : newestSeq ?? .min
        insert(ChatLine(id: id, seq: nil, role: role, text: text, timestamp: timestamp, state: .local, order: LineOrder(seq: anchor, local: counter)))
        return id
    }

    /// Local lines waiting at the bottom take their place after the newest seq, before a newer message.
    private mutating func settleLocalLines() {
        guard lines.contains(where: { $0.state == .local && $0.order.seq == .max }) else { return }
        for index in lines.indices where lines[index].state == .local && lines[index].order.seq == .max {
            lines[index].order.seq = newestSeq ?? .min
        }
        lines.sort { $0.order < $1.order }
    }

    /// Adds the echo of a message sent from here, shown until the server's copy replaces it.
    public mutating func appendPending(clientID: String, text: String, timestamp: Int64) {
        insert(ChatLine(id: clientID, seq: nil, role: .user, text: text, timestamp: timestamp, state: .pending, order: bottomOrder(keeping: nil)))
    }

    /// Streaming answers stop where they are: the connection dropped, or the server reported an error.
    public mutating func interruptStreams() {
        for index in lines.indices where lines[index].state == .streaming { lines[index].state = .interrupted }
    }

    /// Whether an answer is streaming.
    public var isStreaming: Bool { lines.contains { $0.state == .streaming } }

    private mutating func bottomOrder(keeping existing: Int?) -> LineOrder {
        if let existing, lines[existing].order.seq == .max { return lines[existing].order }
        counter += 1
        return LineOrder(seq: .max, local: counter)
    }

    private mutating func insert(_ line: ChatLine) {
        var low = 0
        var high = lines.count
        while low < high {
            let middle = (low + high) / 2
            if lines[middle].order <= line.order { low = middle + 1 } else { high = middle }
        }
        lines.insert(line, at: low)
        if let seq = line.seq, seq > newestSeq ?? .min { newestSeq = seq }
    }
}
