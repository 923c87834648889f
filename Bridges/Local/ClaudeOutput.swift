import RelayCore
import RelayProcess

/// Claude Code's stdout cut into lines for `ClaudeStreamParser`, each at most `lineLimit` bytes.
struct ClaudeOutput: ChildOutputReader {
    /// Longest line accepted (a tool's whole input or result can be long); more kills the child.
    static let lineLimit = 4 << 20

    private(set) var parser: ClaudeStreamParser
    /// The start of a line whose end has not arrived yet.
    private var partial: [UInt8] = []

    init(resumed: String?) { parser = ClaudeStreamParser(resumed: resumed) }

    mutating func read(_ bytes: ArraySlice<UInt8>) throws(ChildOutputError) -> [ChildOutput] {
        var found: [ChildOutput] = []
        var rest = bytes
        while let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
            let piece = rest[..<newline]
            rest = rest[rest.index(after: newline)...]
            try checkLength(partial.count + piece.count)
            if partial.isEmpty {
                found += try parser.parse(line: piece)
            } else {
                partial += piece
                found += try parser.parse(line: partial)
                partial.removeAll(keepingCapacity: true)
            }
        }
        try checkLength(partial.count + rest.count)
        partial += rest
        return found
    }

    func progressText() -> String { parser.text }

    var isComplete: Bool { parser.isComplete }

    /// A last line without a line break is read too (its `result` counts; other events are lost).
    func ending(_ termination: ChildProcess.Termination, stderr: String) -> [TurnEvent] {
        var last = parser
        if !partial.isEmpty { _ = try? last.parse(line: partial) }
        return last.ending(termination, stderr: stderr)
    }

    private func checkLength(_ count: Int) throws(ChildOutputError) {
        if count > Self.lineLimit { throw ChildOutputError(reason: "a line of Claude Code's output is longer than \(Self.lineLimit >> 20) MiB") }
    }
}
