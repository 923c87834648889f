import RelayCore

extension ClaudeSession {
    /// Who asks, as the relay's approval notes name it.
    static let agentName = "Claude Code"

    /// What the relay tells Claude Code when a tool asks while no turn of the relay's is there to
    /// ask the user (a background agent's call after its turn ended).
    static let nobodyToAsk = "Nobody can answer this permission request now: the relay's turn that started this work has ended"

    /// `control_request` from Claude Code: `can_use_tool` becomes an approval of the turn at work;
    /// anything else is answered "not handled" so Claude Code does not wait.
    mutating func controlRequest(_ json: JSONValue, now: Int64) -> [Action] {
        let requestID = json["request_id"]?.stringValue ?? ""
        let request = json["request"] ?? .null
        let subtype = request["subtype"]?.stringValue ?? ""
        guard subtype == "can_use_tool" else { return [.write(ClaudeInput.unsupported(requestID: requestID, subtype: subtype))] }
        guard let index = ownerIndex, !turns[index].over, turns[index].approvals.count < 64 else {
            return [.write(ClaudeInput.deny(requestID: requestID, message: Self.nobodyToAsk))]
        }
        let tool = request["tool_name"]?.stringValue ?? "a tool"
        let input = request["input"] ?? .object([:])
        let rules = ClaudeInput.sessionRules(from: request["permission_suggestions"]?.arrayValue ?? [])
        turns[index].approvals[requestID] = PendingApproval(input: input, rules: rules)
        if turns[index].waitingSince == nil { turns[index].waitingSince = now }
        let ask = ApprovalAsk(
            requestID: requestID,
            agent: Self.agentName,
            toolName: String(tool.prefix(ToolActivity.textLimit)),
            summary: ClaudeToolText.summary(tool: tool, input: input, description: request["description"]?.stringValue),
            input: ClaudeToolText.bounded(input),
            toolUseID: request["tool_use_id"]?.stringValue,
            directory: settings.directory,
            // Always-allow needs a rule to add; without one it would be allow-once in disguise.
            decisions: rules.isEmpty ? [.allowOnce, .deny] : ApprovalDecision.allCases,
            timeoutMillis: settings.approvalTimeoutMillis
        )
        return [.emit(turn: turns[index].id, .approval(ask))]
    }

    /// Claude Code no longer waits for the answer to `request_id` (the turn was interrupted).
    mutating func controlCancel(_ json: JSONValue, now: Int64) -> [Action] {
        guard let requestID = json["request_id"]?.stringValue,
            let index = turns.firstIndex(where: { $0.approvals[requestID] != nil })
        else { return [] }
        turns[index].approvals[requestID] = nil
        if turns[index].approvals.isEmpty { stopWaiting(at: index, now: now) }
        return turns[index].over ? [] : [.emit(turn: turns[index].id, .approvalWithdrawn(requestID: requestID))]
    }

    /// The user decided the question `requestID` of turn `id`: Claude Code hears it once.
    mutating func answer(turn id: Int, requestID: String, _ answer: ApprovalAnswer, now: Int64) -> [Action] {
        guard let index = turns.firstIndex(where: { $0.id == id }), let pending = turns[index].approvals.removeValue(forKey: requestID) else {
            return []
        }
        if turns[index].approvals.isEmpty { stopWaiting(at: index, now: now) }
        // The answer is news from the relay's side: the turn is not silent while Claude Code acts on it.
        turns[index].lastOutput = now
        switch answer {
        case .allow(let always):
            return [.write(ClaudeInput.allow(requestID: requestID, input: pending.input, rules: always ? pending.rules : []))]
        case .deny(let message):
            return [.write(ClaudeInput.deny(requestID: requestID, message: message))]
        }
    }

    private mutating func stopWaiting(at index: Int, now: Int64) {
        guard let since = turns[index].waitingSince else { return }
        turns[index].waitedMillis += max(0, now - since)
        turns[index].waitingSince = nil
    }
}
