import RelayCore
import RelayProcess

extension ClaudeSession {
    /// Longest line accepted from Claude Code (a tool's whole input or result can be long).
    static let lineLimit = 4 << 20

    /// A `result` line ends the turn it belongs to: its report, the session it is in, then its
    /// answer or why it failed. A result before `system/init` means Claude Code could not start
    /// (a refused `--resume`); a result of no turn of the relay's is a background agent's.
    mutating func result(_ result: ClaudeResult, now: Int64) -> [Action] {
        guard initSeen else {
            startupFailure = result
            return failAll(reason: startupReason(result), forget: refusedResume(result))
        }
        let previousTotal = lastTotalCostUSD
        if let total = result.totalCostUSD { lastTotalCostUSD = total }
        guard let index = ownerIndex else { return [] }
        let turn = turns.remove(at: index)
        if escalation?.step == .interrupted, !turns.contains(where: \.over) { escalation = nil }
        guard !turn.over else { return [] }
        var actions: [Action] = [.emit(turn: turn.id, .report(result.report(previousTotalUSD: previousTotal)))]
        // Reported only once a turn ran to its result, so an id is never stored before Claude
        // Code wrote its session (and `/clear`'s new session replaces the old one).
        if let session = result.sessionID ?? sessionID, session != reportedSession {
            reportedSession = session
            actions.append(.emit(turn: turn.id, .backendSession(session)))
        }
        let ending: TurnEvent = result.succeeded ? .final(turn.answer.final(result: result.text)) : .failed(result.failureReason)
        return actions + [.emit(turn: turn.id, .typing(false)), .emit(turn: turn.id, ending)]
    }

    /// `command_lifecycle` completed for a line whose `result` never came.
    mutating func completedWithoutResult(uuid: String, now: Int64) -> [Action] {
        guard let index = turns.firstIndex(where: { $0.uuid == uuid }) else { return [] }
        let turn = turns.remove(at: index)
        if turn.over { return [] }
        return [.emit(turn: turn.id, .typing(false)), .emit(turn: turn.id, .failed("Claude Code ended the turn without a result"))]
    }

    /// A line longer than `lineLimit`: the turns fail and the process is stopped (the next
    /// turn starts a new one, resuming the session).
    mutating func overlongLine(now: Int64) -> [Action] {
        var actions = failAll(reason: "a line of Claude Code's output is longer than \(Self.lineLimit >> 20) MiB", forget: false)
        stopping = true
        escalation = (.terminated, now)
        actions.append(.terminate)
        return actions
    }

    /// Claude Code exited: every turn still running fails, saying why.
    mutating func exited(_ termination: ChildProcess.Termination, stderr: String) -> [Action] {
        if turns.allSatisfy(\.over) {
            turns = []
            return []
        }
        if let startupFailure { return failAll(reason: startupReason(startupFailure), forget: refusedResume(startupFailure)) }
        var reason: String
        switch termination {
        case .exited(let status): reason = "Claude Code exited with status \(status)"
        case .signaled(let signal) where escalation != nil: reason = "Claude Code was stopped (signal \(signal))"
        case .signaled(let signal): reason = "Claude Code was killed by signal \(signal)"
        }
        if let firstUnreadable {
            reason += "; \(unreadable) unreadable line\(unreadable == 1 ? "" : "s") of output, the first: \(firstUnreadable)"
        }
        if !stderr.isEmpty { reason += "; stderr: \(stderr)" }
        let forget = !initSeen && settings.resuming.map { stderr.contains($0) } == true
        return failAll(reason: reason, forget: forget)
    }

    /// Ends every turn; the live ones fail with `reason`, after forgetting the session when it is gone.
    private mutating func failAll(reason: String, forget: Bool) -> [Action] {
        var actions: [Action] = []
        for turn in turns where !turn.over {
            if forget { actions.append(.emit(turn: turn.id, .backendSession(nil))) }
            actions += [.emit(turn: turn.id, .typing(false)), .emit(turn: turn.id, .failed(reason))]
        }
        if forget { reportedSession = nil }
        turns = []
        return actions
    }

    /// Whether Claude Code refused the session it was asked to resume.
    private func refusedResume(_ result: ClaudeResult) -> Bool {
        guard let resumed = settings.resuming else { return false }
        return result.errors.contains { $0.contains(resumed) || $0.contains("--resume") }
    }

    private func startupReason(_ result: ClaudeResult) -> String {
        let said = result.errors.isEmpty ? (result.text ?? "no reason given") : result.errors.joined(separator: "; ")
        if let resumed = settings.resuming, refusedResume(result) {
            return "Claude Code could not resume session \(resumed): \(said); the next message starts a new session"
        }
        return "Claude Code could not start: \(said)"
    }
}
