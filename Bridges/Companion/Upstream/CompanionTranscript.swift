/// The text of one upstream turn so far, built from its `streamChunk`s the way the iOS app joins
/// them: text chunks are whole paragraphs, joined with a blank line.
struct CompanionTranscript: Sendable, Equatable {
    /// A peer cannot grow one turn's text past this (UTF-8 bytes); later chunks are dropped.
    static let defaultMaxBytes = 1 << 20

    let maxBytes: Int
    private(set) var text = ""
    private(set) var byteCount = 0
    /// Some text was dropped because of `maxBytes`.
    private(set) var isTruncated = false

    init(maxBytes: Int = Self.defaultMaxBytes) { self.maxBytes = maxBytes }

    var isEmpty: Bool { byteCount == 0 }

    /// Adds a chunk; returns the whole text when it grew (a new progress), nil when the chunk
    /// carries no text (`complete`, tool and other chunks, blank content) or would not fit.
    mutating func append(type: String, content: String) -> String? {
        guard type == "text", content.contains(where: { !$0.isWhitespace }) else { return nil }
        let separator = isEmpty ? 0 : 2
        let added = content.utf8.count + separator
        guard byteCount + added <= maxBytes else {
            isTruncated = true
            return nil
        }
        if !isEmpty { text += "\n\n" }
        text += content
        byteCount += added
        return text
    }
}
