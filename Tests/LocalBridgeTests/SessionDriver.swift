import RelayCore

@testable import LocalBridge

/// A `ClaudeSession` driven by a test: lines in at a time the test sets, actions out.
struct SessionDriver {
    var session: ClaudeSession
    var now: Int64 = 0

    init(_ settings: ClaudeSession.Settings = ClaudeSession.Settings(directory: "/srv/app")) {
        session = ClaudeSession(settings: settings)
    }

    /// Starts turn `id` and has Claude Code take it up (as 2.1.x says with `command_lifecycle`).
    mutating func begin(_ id: Int = 1, _ text: String = "hello", lifecycle: Bool = true) -> [ClaudeSession.Action] {
        let uuid = "00000000-0000-4000-8000-00000000000\(id % 10)"
        var actions = session.start(turn: id, text: text, uuid: uuid, now: now)
        if lifecycle {
            actions += feed(ClaudeLines.lifecycle(uuid, "queued"), ClaudeLines.lifecycle(uuid, "started"))
        }
        return actions + feed(ClaudeLines.initLine())
    }

    mutating func feed(_ lines: String...) -> [ClaudeSession.Action] {
        lines.flatMap { session.receive(line: Array($0.utf8), now: now) }
    }

    mutating func tick(at time: Int64) -> [ClaudeSession.Action] {
        now = time
        return session.tick(now: time)
    }
}

extension Array where Element == ClaudeSession.Action {
    /// The events for turn `id`, in order.
    func events(_ id: Int = 1) -> [TurnEvent] {
        compactMap { if case .emit(id, let event) = $0 { event } else { nil } }
    }

    /// The lines written to Claude Code, parsed.
    var written: [JSONValue] {
        compactMap { if case .write(let line) = $0 { JSONValue.parse(line) } else { nil } }
    }

    var signals: [ClaudeSession.Action] {
        filter { action in
            switch action {
            case .terminate, .kill, .closeInput: true
            default: false
            }
        }
    }
}
