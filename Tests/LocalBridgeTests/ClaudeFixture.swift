import Foundation
import RelayCore

@testable import LocalBridge

/// `Tests/fixtures/claude-code/claude`, a stand-in for Claude Code, with a log of its runs.
struct ClaudeFixture {
    static let program = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fixtures/claude-code/claude").path

    /// One run as the fixture logged it.
    struct Run: Decodable {
        var argv: [String]
        var cwd: String
        var resume: String?
        var prompt: String
        var pid: Int32
        var helper: Int32?
    }

    let directory: String
    var logPath: String { directory + "/runs.jsonl" }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("clawrelay-claude-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    func backend(
        mode: String = "ok",
        extra: [String] = [],
        workingDirectory: String? = nil,
        timeout: Int = 20,
        exitGraceMillis: Int = 3_000,
        command: [String] = [ClaudeFixture.program]
    ) -> ClaudeCodeBackend {
        ClaudeCodeBackend(
            name: "claude",
            command: command,
            timeoutSeconds: timeout,
            environment: ["CLAUDE_FIXTURE_MODE": mode, "CLAUDE_FIXTURE_LOG": logPath],
            workingDirectory: workingDirectory,
            extraArguments: extra,
            exitGraceMillis: exitGraceMillis
        )
    }

    /// Every run logged so far.
    func runs() throws -> [Run] {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
        return try text.split(separator: "\n").map { try JSONDecoder().decode(Run.self, from: Data($0.utf8)) }
    }

    /// Whether a process exists and is not a zombie waiting for a parent that is gone.
    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(close, offsetBy: 2)] != "Z"
    }

    /// Waits up to `limit` for every process in `pids` to be gone; true if they all went.
    static func waitGone(_ pids: [Int32], limit: Duration = .seconds(20)) async -> Bool {
        let clock = ContinuousClock()
        let end = clock.now + limit
        while pids.contains(where: isAlive) {
            guard clock.now < end else { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }
}

extension Array where Element == TurnEvent {
    /// The events without progress that repeats the one before it (the throttle may send a text twice).
    var withoutRepeats: [TurnEvent] {
        var kept: [TurnEvent] = []
        var lastProgress: String?
        for event in self {
            if case .progress(let text) = event {
                if text == lastProgress { continue }
                lastProgress = text
            }
            kept.append(event)
        }
        return kept
    }

    var sessions: [String?] { compactMap { if case .backendSession(let id) = $0 { id } else { nil } } }
}
