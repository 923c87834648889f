import Foundation
import RelayCore

/// The answer Claude Code gives in one turn: its text blocks, as partial messages stream them
/// (`--include-partial-messages`) and `assistant` lines confirm them, joined by a blank line.
///
/// What people saw stream is what is stored. Text Claude Code makes up itself (`"<synthetic>"`
/// assistant lines: an API error, a slash command's output) is held apart and never streamed:
/// the turn's `result` says whether it is an answer or an error.
struct ClaudeAnswer: Sendable, Equatable {
    /// Largest answer accepted, in UTF-8 bytes.
    static let limit = 1 << 20

    /// The whole answer so far.
    private(set) var text = ""
    /// What `<synthetic>` assistant lines said, joined.
    private(set) var synthetic = ""

    /// Text blocks in order; `blocks[..<confirmed]` came from `assistant` lines, the rest from deltas.
    private var blocks: [String] = []
    private var confirmed = 0
    /// Whether partial-message deltas go to the last block.
    private var deltaOpen = false

    /// A partial message's content block starts; only a text block takes deltas.
    mutating func blockStarted(isText: Bool, text initial: String) throws(ClaudeAnswerTooLarge) -> Bool {
        deltaOpen = false
        return isText ? try append(initial) : false
    }

    /// The block (or the message) ended: the next delta opens a new one.
    mutating func blockStopped() { deltaOpen = false }

    /// Delta text; true when the answer grew.
    mutating func append(_ delta: String) throws(ClaudeAnswerTooLarge) -> Bool {
        if !deltaOpen {
            blocks.append("")
            deltaOpen = true
        }
        guard !delta.isEmpty else { return false }
        if blocks[blocks.count - 1].isEmpty, !text.isEmpty { text += "\n\n" }
        blocks[blocks.count - 1] += delta
        text += delta
        try checkSize()
        return true
    }

    /// A whole text block from an `assistant` line: it replaces what deltas made of it, or comes
    /// new. True when the answer changed.
    mutating func confirm(_ block: String) throws(ClaudeAnswerTooLarge) -> Bool {
        deltaOpen = false
        var changed = false
        if confirmed < blocks.count {
            if blocks[confirmed] != block {
                blocks[confirmed] = block
                text = blocks.filter { !$0.isEmpty }.joined(separator: "\n\n")
                changed = true
            }
        } else {
            blocks.append(block)
            if !block.isEmpty {
                text += (text.isEmpty ? "" : "\n\n") + block
                changed = true
            }
        }
        confirmed += 1
        try checkSize()
        return changed
    }

    /// Text Claude Code wrote itself, not the model.
    mutating func addSynthetic(_ block: String) {
        guard !block.isEmpty, synthetic.utf8.count < Self.limit else { return }
        synthetic += (synthetic.isEmpty ? "" : "\n\n") + block
    }

    /// The stored answer once the result said success: the text people saw stream, ending with
    /// the result's text (normally its last block already); without any, the result or what
    /// Claude Code wrote itself (a slash command's output).
    func final(result: String?) -> String {
        let tail = (result ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        let shown = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if shown.isEmpty { return tail.isEmpty ? synthetic : result ?? "" }
        if tail.isEmpty || shown.hasSuffix(tail) { return text }
        return text + "\n\n" + (result ?? "")
    }

    private func checkSize() throws(ClaudeAnswerTooLarge) {
        if text.utf8.count > Self.limit { throw ClaudeAnswerTooLarge() }
    }
}

/// An answer past `ClaudeAnswer.limit`: the turn fails rather than keep growing.
struct ClaudeAnswerTooLarge: Error, Equatable, CustomStringConvertible {
    var description: String { "the answer is larger than \(ClaudeAnswer.limit >> 20) MiB" }
}
