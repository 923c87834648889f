import RelayCore

/// One live Claude Code process talking stream-json with the relay, as a value: its inputs (a
/// turn to start, a line it printed, an approval's answer, a cancel, the time, its exit) go in,
/// and what to do comes out (lines to write, events for a turn, signals to send). Pure: no I/O;
/// time is milliseconds on a monotonic clock, given with each input.
///
/// A turn is one user line. Its output is told from a background agent's by the
/// `command_lifecycle` lines Claude Code 2.1.x prints for the line's `uuid` (without them, the
/// first `result` after a line is that line's). Stopping goes a ladder, so Claude Code's tools
/// never outlive a turn: interrupt (the process lives on), then SIGTERM (Claude Code kills its
/// tools, which run in sessions of their own), then SIGKILL of its process group.
struct ClaudeSession: Sendable {
    struct Settings: Sendable, Equatable {
        /// The longest a turn may go without output (not counting waits for an approval).
        var inactivityMillis: Int64 = 600_000
        /// The longest a turn may take (not counting waits for an approval); nil: no bound.
        var maxTurnMillis: Int64?
        /// How long a person has to answer an approval.
        var approvalTimeoutMillis = 600_000
        /// How long an interrupted turn may take to end before Claude Code gets SIGTERM.
        var interruptGraceMillis: Int64 = 5_000
        /// How long after SIGTERM (or its input closed) before its process group is killed.
        var terminateGraceMillis: Int64 = 5_000
        /// Where it runs (approvals show it).
        var directory: String?
        /// The session it was started to resume (`--resume`).
        var resuming: String?
        /// The permission mode it was started with (`default` for the relay's `ask`), which a
        /// read-only turn's `plan` gives way back to.
        var permissionMode = "default"
    }

    enum Action: Sendable, Equatable {
        /// One line for Claude Code's stdin.
        case write(String)
        /// An event for the relay's turn `turn`.
        case emit(turn: Int, TurnEvent)
        /// End of input: Claude Code exits once idle.
        case closeInput
        /// SIGTERM to Claude Code itself (it stops its tools and exits).
        case terminate
        /// SIGKILL to its whole process group.
        case kill
    }

    enum Phase: Sendable, Equatable {
        /// Written; Claude Code may hold it queued.
        case written
        /// Claude Code works on it (`command_lifecycle` started).
        case started
    }

    /// A question the turn waits on, with what answering it needs.
    struct PendingApproval: Sendable, Equatable {
        var input: JSONValue
        var rules: [JSONValue]
    }

    struct Turn: Sendable, Equatable {
        let id: Int
        let uuid: String
        var phase = Phase.written
        /// Ended for the relay (cancelled, timed out): nothing more goes out; its result is awaited.
        var over = false
        var answer = ClaudeAnswer()
        var tools: [String: ToolActivity] = [:]
        var approvals: [String: PendingApproval] = [:]
        let startedAt: Int64
        var lastOutput: Int64
        /// Time spent waiting for answers, which no timeout counts.
        var waitedMillis: Int64 = 0
        var waitingSince: Int64?

        func waited(at now: Int64) -> Int64 { waitedMillis + (waitingSince.map { now - $0 } ?? 0) }
    }

    /// The step of the stop ladder reached, and when.
    enum Escalation: Sendable, Equatable {
        case interrupted
        case inputClosed
        case terminated
        case killed
    }

    let settings: Settings
    /// Turns written and not yet ended by Claude Code, in the order written.
    var turns: [Turn] = []
    /// Whether Claude Code prints `command_lifecycle` lines (learned from the first one).
    var lifecycle = false
    /// Whether a `system/init` came: the session started (a `result` before one is a start-up failure).
    var initSeen = false
    /// Claude Code's session id, as `system/init` said it.
    private(set) var sessionID: String?
    /// The session id the relay was last told (starts as the one resumed).
    var reportedSession: String?
    /// `claude_code_version` from `system/init`.
    private(set) var version: String?
    /// `slash_commands` from `system/init`: Claude Code's own commands, without the slash.
    private(set) var slashCommands: [String]?
    /// The process's total cost at the last `result`, for turns the CLI gives no cost of their own.
    var lastTotalCostUSD: Double?
    var escalation: (step: Escalation, since: Int64)?
    /// Stopping: no turn may start.
    var stopping = false
    /// A `result` that came before any `system/init`: why Claude Code could not start.
    var startupFailure: ClaudeResult?
    var unreadable = 0
    var firstUnreadable: String?
    var nextRequest = 0
    /// The last read-only turn switched Claude Code to `plan` mode.
    var planning = false

    init(settings: Settings) {
        self.settings = settings
        reportedSession = settings.resuming
    }

    /// Slash commands kept from `system/init` at most, and the longest name kept.
    static let maxSlashCommands = 200
    static let maxSlashCommandBytes = 100

    /// Claude Code's version, its slash commands and the session once `system/init` said them.
    mutating func noteInit(sessionID: String?, version: String?, slashCommands: [JSONValue]? = nil) {
        initSeen = true
        if let sessionID, !sessionID.isEmpty { self.sessionID = sessionID }
        if let version, !version.isEmpty { self.version = String(version.prefix(64)) }
        if let slashCommands {
            let names = slashCommands.compactMap(\.stringValue).map { $0.hasPrefix("/") ? String($0.dropFirst()) : $0 }
            self.slashCommands = Array(
                names.filter { !$0.isEmpty && $0.utf8.count <= Self.maxSlashCommandBytes && !$0.contains(where: \.isWhitespace) }
                    .prefix(Self.maxSlashCommands)
            )
        }
    }

    /// Nothing written is left to end: the process may be stopped or given to another conversation.
    var isIdle: Bool { turns.isEmpty }

    var turnIDs: [Int] { turns.map(\.id) }

    /// Starts the relay's turn `id`: one user line (with the attachments' content blocks), after
    /// a switch to `plan` mode for a read-only turn (and back after it, at the next turn).
    mutating func start(turn id: Int, text: String, attachments: [JSONValue] = [], readOnly: Bool = false, uuid: String, now: Int64) -> [Action] {
        turns.append(Turn(id: id, uuid: uuid, startedAt: now, lastOutput: now))
        var actions: [Action] = [.emit(turn: id, .typing(true))]
        if readOnly != planning {
            planning = readOnly
            nextRequest += 1
            actions.append(.write(ClaudeInput.setPermissionMode(readOnly ? "plan" : settings.permissionMode, requestID: "relay-mode-\(nextRequest)")))
        }
        return actions + [.write(ClaudeInput.user(text, attachments: attachments, uuid: uuid))]
    }

    /// The relay stopped the turn: nothing more goes out for it, and Claude Code is interrupted
    /// if it works on it (a turn still queued behind a background agent's is left to run; its
    /// tools cannot get permission, since nobody is asked).
    mutating func cancel(turn id: Int, now: Int64) -> [Action] {
        guard let index = turns.firstIndex(where: { $0.id == id }), !turns[index].over else { return [] }
        return end(at: index, with: nil, now: now)
    }

    /// Ends turn `index` for the relay with `event` (nil: silently), interrupting Claude Code when it works on it.
    mutating func end(at index: Int, with event: TurnEvent?, now: Int64) -> [Action] {
        let id = turns[index].id
        turns[index].over = true
        turns[index].approvals = [:]
        turns[index].waitingSince = nil
        var actions: [Action] = event.map { [.emit(turn: id, .typing(false)), .emit(turn: id, $0)] } ?? []
        if ownerIndex == index || (!lifecycle && index == 0) {
            nextRequest += 1
            actions.append(.write(ClaudeInput.interrupt(requestID: "relay-interrupt-\(nextRequest)")))
            if escalation == nil { escalation = (.interrupted, now) }
        }
        return actions
    }

    /// Stops the process: by closing its input (idle, evicted: it exits once its turn is over),
    /// or with SIGTERM at once (`terminate`: the relay stops); SIGKILL follows if it lingers.
    mutating func stop(now: Int64, terminate: Bool = false) -> [Action] {
        let signalled = escalation.map { $0.step == .terminated || $0.step == .killed } ?? false
        let first = !stopping
        stopping = true
        if terminate, !signalled {
            escalation = (.terminated, now)
            return [.closeInput, .terminate]
        }
        guard first, !signalled else { return [] }
        escalation = (.inputClosed, now)
        return [.closeInput]
    }

    /// The turn Claude Code's content lines belong to now: the one it said it started, else
    /// (a CLI without `command_lifecycle`) the oldest written.
    var ownerIndex: Int? {
        lifecycle ? turns.firstIndex { $0.phase == .started } : turns.indices.first
    }

    /// When `tick` next has something to do.
    var nextDeadline: Int64? {
        var deadlines: [Int64] = []
        for turn in turns where !turn.over {
            if turn.waitingSince == nil { deadlines.append(turn.lastOutput + settings.inactivityMillis) }
            if let max = settings.maxTurnMillis { deadlines.append(turn.startedAt + max + turn.waitedMillis) }
        }
        if let escalation {
            switch escalation.step {
            case .interrupted: deadlines.append(escalation.since + settings.interruptGraceMillis)
            case .inputClosed, .terminated: deadlines.append(escalation.since + settings.terminateGraceMillis)
            case .killed: break
            }
        }
        return deadlines.min()
    }

    /// Timeouts and the stop ladder.
    mutating func tick(now: Int64) -> [Action] {
        var actions: [Action] = []
        for index in turns.indices where !turns[index].over {
            let turn = turns[index]
            if turn.waitingSince == nil, now - turn.lastOutput >= settings.inactivityMillis {
                actions += end(at: index, with: .failed("no output for \(settings.inactivityMillis / 1000) s"), now: now)
            } else if let max = settings.maxTurnMillis, now - turn.startedAt - turn.waited(at: now) >= max {
                actions += end(at: index, with: .failed("ran longer than \(max / 1000) s"), now: now)
            }
        }
        guard let escalation else { return actions }
        switch escalation.step {
        case .interrupted where !turns.contains(where: \.over):
            self.escalation = nil
        case .interrupted where now - escalation.since >= settings.interruptGraceMillis,
            .inputClosed where now - escalation.since >= settings.terminateGraceMillis:
            self.escalation = (.terminated, now)
            actions.append(.terminate)
        case .terminated where now - escalation.since >= settings.terminateGraceMillis:
            self.escalation = (.killed, now)
            actions.append(.kill)
        default:
            break
        }
        return actions
    }
}
