/// Cuts an answer that grows into the app's text chunks: whole paragraphs (blank-line separated),
/// each sent once, never empty. The app joins text chunks with a blank line again.
struct ParagraphChunker: Equatable {
    /// Paragraphs of the answer handed out so far.
    private(set) var emitted = 0
    /// The next chunk id's number (`chunk-N`, from 0 per turn).
    private(set) var nextID = 0

    /// The paragraphs of `text` (the whole answer so far) not handed out yet that are complete:
    /// all but the last one, or every one when `final`.
    mutating func take(_ text: String, final: Bool) -> [(id: String, content: String)] {
        var paragraphs = text.components(separatedBy: "\n\n")
        if !final { paragraphs.removeLast() }
        guard paragraphs.count > emitted else { return [] }
        let fresh = paragraphs[emitted...]
        emitted = paragraphs.count
        return fresh.compactMap { paragraph in
            let content = paragraph.trimmingCharacters(in: .newlines)
            guard !content.allSatisfy(\.isWhitespace) else { return nil }
            return (nextChunkID(), content)
        }
    }

    mutating func nextChunkID() -> String {
        defer { nextID += 1 }
        return "chunk-\(nextID)"
    }
}
