import Foundation
import RelayCore
import RelayProcess

/// What a child's output means for its turn: `ChildTurn` moves the bytes and keeps the time, a
/// reader turns them into events (the command backend's plain text, Claude Code's stream-json).
///
/// - Important: Used only on the turn's thread.
protocol ChildOutputReader: Sendable {
    /// Takes stdout bytes as they arrive; returns what they mean, in order. Throwing ends the turn
    /// with the error's reason and kills the child.
    mutating func read(_ bytes: ArraySlice<UInt8>) throws(ChildOutputError) -> [ChildOutput]
    /// The whole answer so far, asked for when a `.grew` is due to go out.
    func progressText() -> String
    /// True once the output said the turn is over: the child then gets `ChildTurn`'s exit grace to
    /// end by itself before its group is killed (a CLI may linger after its last line).
    var isComplete: Bool { get }
    /// The child ended and its output was read: the events that end the turn, the last one
    /// `.final` or `.failed`. `stderr` is the end of what it wrote there.
    func ending(_ termination: ChildProcess.Termination, stderr: String) -> [TurnEvent]
}

/// One thing a reader found in the output.
enum ChildOutput: Equatable {
    /// The answer grew; `progressText()` is sent as progress at most every `ChildTurn.progressInterval`.
    case grew
    /// An event to send in order. Progress is coalesced like `.grew`; anything else first sends
    /// the progress held back, so the order stays as the output had it.
    case event(TurnEvent)
}

/// Output the turn cannot go on with (too large, unreadable); `reason` is for logs and the asker.
struct ChildOutputError: Error, Equatable {
    let reason: String
}

/// A child's stderr, bounded: the first bytes for the log, the last ones for a failure's reason.
struct StderrCapture {
    static let headLimit = 4_096
    static let tailLimit = 1_024

    private(set) var head: [UInt8] = []
    private(set) var tail: [UInt8] = []

    mutating func append(_ bytes: ArraySlice<UInt8>) {
        head.append(contentsOf: bytes.prefix(max(0, Self.headLimit - head.count)))
        tail.append(contentsOf: bytes.suffix(Self.tailLimit))
        if tail.count > 2 * Self.tailLimit { tail.removeFirst(tail.count - Self.tailLimit) }
    }

    /// The last `tailLimit` bytes as text, its last lines trimmed of blank space.
    var tailText: String {
        let bytes = tail.suffix(Self.tailLimit)
        let text = String(decoding: bytes, as: UTF8.self)
        return text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " / ")
    }
}
