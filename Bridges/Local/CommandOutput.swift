import RelayCore
import RelayProcess

/// A command backend's stdout: the answer as plain text, growing, at most `limit` bytes.
struct CommandOutput: ChildOutputReader {
    /// Largest answer accepted; more kills the child.
    static let limit = 1 << 20

    private var output: [UInt8] = []

    mutating func read(_ bytes: ArraySlice<UInt8>) throws(ChildOutputError) -> [ChildOutput] {
        output.append(contentsOf: bytes)
        if output.count > Self.limit { throw ChildOutputError(reason: "output too large") }
        return bytes.isEmpty ? [] : [.grew]
    }

    func progressText() -> String { OutputText.text(of: output, trimmingNewline: false) }

    /// Plain text says nothing about its end: the child's exit does.
    var isComplete: Bool { false }

    func ending(_ termination: ChildProcess.Termination, stderr: String) -> [TurnEvent] {
        switch termination {
        case .exited(0): [.final(OutputText.text(of: output, trimmingNewline: true))]
        case .exited(let status): [.failed("exit status \(status)")]
        case .signaled(let signal): [.failed("killed by signal \(signal)")]
        }
    }
}

/// A child's output bytes as text.
enum OutputText {
    /// The output as text: a cut multi-byte character at the end is left for the next read
    /// (unless `trimmingNewline`, for the whole output, which drops one final line break instead).
    static func text(of output: [UInt8], trimmingNewline: Bool) -> String {
        var end = trimmingNewline ? output.count : completeUTF8Prefix(output)
        if trimmingNewline, end > 0, output[end - 1] == UInt8(ascii: "\n") {
            end -= 1
            if end > 0, output[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        }
        return String(decoding: output[..<end], as: UTF8.self)
    }

    /// The length of `bytes` without a trailing, incomplete UTF-8 sequence.
    static func completeUTF8Prefix(_ bytes: [UInt8]) -> Int {
        var index = bytes.count - 1
        while index >= 0, bytes.count - index <= 4 {
            let byte = bytes[index]
            if byte & 0xC0 != 0x80 {
                let length = byte < 0xC0 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4
                return bytes.count - index >= length ? bytes.count : index
            }
            index -= 1
        }
        return bytes.count
    }
}
