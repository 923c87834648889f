/// How far a stream's log moved in one write: the seqs `(prev, last]` were taken by it, and every
/// seq up to `prev` was committed before. A stream is a user, or a shared audience such as
/// `@admins`; its seqs are its own clock's, so their order is commit order.
///
/// Positions are what nodes tell each other after a commit (the events themselves stay in the
/// log): a node that learns one reads what it has not delivered from the log.
public struct StreamPosition: Sendable, Hashable, CustomStringConvertible {
    public var stream: String
    public var prev: Int64
    public var last: Int64

    public init(stream: String, prev: Int64, last: Int64) {
        self.stream = stream
        self.prev = prev
        self.last = last
    }

    /// `stream:prev:last`; the stream may itself hold colons (the two numbers are read from the right).
    public var description: String { "\(stream):\(prev):\(last)" }

    /// Reads `description`'s form back; nil for anything else (a negative or backwards range too).
    public init?(_ text: Substring) {
        guard let lastColon = text.lastIndex(of: ":") else { return nil }
        let head = text[..<lastColon]
        guard let prevColon = head.lastIndex(of: ":"), let prev = Int64(head[head.index(after: prevColon)...]),
            let last = Int64(text[text.index(after: lastColon)...]), prev >= 0, last >= prev
        else { return nil }
        let stream = head[..<prevColon]
        guard !stream.isEmpty else { return nil }
        self.init(stream: String(stream), prev: prev, last: last)
    }

    /// Positions joined with `;` into payloads of at most `maxBytes` UTF-8 bytes each (PostgreSQL's
    /// NOTIFY takes under 8,000); a position longer than that on its own gets a payload of its own.
    public static func payloads(_ positions: [StreamPosition], maxBytes: Int = 7_900) -> [String] {
        var payloads: [String] = []
        var current = ""
        for position in positions {
            let text = position.description
            if !current.isEmpty, current.utf8.count + 1 + text.utf8.count > maxBytes {
                payloads.append(current)
                current = ""
            }
            current += current.isEmpty ? text : ";" + text
        }
        if !current.isEmpty { payloads.append(current) }
        return payloads
    }

    /// The positions in a payload of `payloads`, skipping any part that does not parse.
    public static func parse(payload: String) -> [StreamPosition] {
        payload.split(separator: ";").compactMap { StreamPosition($0) }
    }
}
