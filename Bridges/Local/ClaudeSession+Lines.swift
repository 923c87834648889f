import RelayCore

extension ClaudeSession {
    /// The model's own name for text Claude Code makes up (API errors, slash commands' output).
    static let syntheticModel = "<synthetic>"

    /// One line Claude Code printed, without its line break.
    mutating func receive(line: some Collection<UInt8>, now: Int64) -> [Action] {
        guard line.contains(where: { !Self.isBlank($0) }) else { return [] }
        guard let json = JSONValue.parse(line), json.objectValue != nil else {
            unreadable += 1
            if firstUnreadable == nil { firstUnreadable = String(String(decoding: line.prefix(120), as: UTF8.self)) }
            return []
        }
        // Any output is a sign of life for every turn it may be working on.
        for index in turns.indices { turns[index].lastOutput = now }
        switch json["type"]?.stringValue {
        case "command_lifecycle":
            return noteLifecycle(json, now: now)
        case "system":
            return system(json)
        case "control_request":
            return controlRequest(json, now: now)
        case "control_cancel_request":
            return controlCancel(json, now: now)
        case "stream_event", "assistant", "user":
            return content(json, now: now)
        case "result":
            return result(ClaudeResult(json), now: now)
        default:
            return []
        }
    }

    /// Claude Code took up (or finished) a user line: which turn the next content lines are.
    private mutating func noteLifecycle(_ json: JSONValue, now: Int64) -> [Action] {
        lifecycle = true
        guard let uuid = json["command_uuid"]?.stringValue, let index = turns.firstIndex(where: { $0.uuid == uuid }) else { return [] }
        switch json["state"]?.stringValue {
        case "started":
            turns[index].phase = .started
            return []
        case "completed":
            return completedWithoutResult(uuid: uuid, now: now)
        default:
            return []
        }
    }

    private mutating func system(_ json: JSONValue) -> [Action] {
        switch json["subtype"]?.stringValue {
        case "init":
            noteInit(
                sessionID: json["session_id"]?.stringValue,
                version: json["claude_code_version"]?.stringValue,
                slashCommands: json["slash_commands"]?.arrayValue
            )
            return []
        case "api_retry":
            guard let index = ownerIndex, !turns[index].over else { return [] }
            return [.emit(turn: turns[index].id, .status(Self.retryStatus(json)))]
        default:
            return []
        }
    }

    /// "API overloaded, retrying 2/10", "API error 500, retrying 1/10", …
    static func retryStatus(_ json: JSONValue) -> String {
        let attempt = json["attempt"]?.integerValue.map(String.init) ?? "?"
        let most = json["max_retries"]?.integerValue.map { "/\($0)" } ?? ""
        let what: String
        switch json["error_status"]?.integerValue {
        case 529?: what = "API overloaded"
        case 429?: what = "API rate limit reached"
        case let status?: what = "API error \(status)"
        case nil: what = "API unreachable"
        }
        return "\(what), retrying \(attempt)\(most)"
    }

    /// Text, tool calls and tool results of the turn Claude Code works on. A subagent's lines
    /// (`parent_tool_use_id` set) show their tools but never add to the answer.
    private mutating func content(_ json: JSONValue, now: Int64) -> [Action] {
        guard let index = ownerIndex, !turns[index].over else { return [] }
        let subagent = !(json["parent_tool_use_id"]?.isNull ?? true)
        let id = turns[index].id
        var actions: [Action] = []
        do throws(ClaudeAnswerTooLarge) {
            switch json["type"]?.stringValue {
            case "stream_event" where !subagent:
                if try streamEvent(json["event"] ?? .null, at: index) { actions.append(.emit(turn: id, .progress(turns[index].answer.text))) }
            case "assistant":
                let synthetic = json["message"]?["model"]?.stringValue == Self.syntheticModel
                for block in json["message"]?["content"]?.arrayValue ?? [] {
                    switch block["type"]?.stringValue {
                    case "text" where synthetic && !subagent:
                        turns[index].answer.addSynthetic(block["text"]?.stringValue ?? "")
                    case "text" where !subagent:
                        if try turns[index].answer.confirm(block["text"]?.stringValue ?? "") {
                            actions.append(.emit(turn: id, .progress(turns[index].answer.text)))
                        }
                    case "tool_use":
                        actions += startTool(block, at: index)
                    default:
                        break
                    }
                }
            case "user":
                for block in json["message"]?["content"]?.arrayValue ?? [] where block["type"]?.stringValue == "tool_result" {
                    actions += endTool(block, at: index)
                }
            default:
                break
            }
        } catch {
            return actions + end(at: index, with: .failed(error.description), now: now)
        }
        return actions
    }

    /// A partial message's event; true when the answer grew.
    private mutating func streamEvent(_ event: JSONValue, at index: Int) throws(ClaudeAnswerTooLarge) -> Bool {
        switch event["type"]?.stringValue {
        case "content_block_start":
            let block = event["content_block"]
            return try turns[index].answer.blockStarted(isText: block?["type"]?.stringValue == "text", text: block?["text"]?.stringValue ?? "")
        case "content_block_delta" where event["delta"]?["type"]?.stringValue == "text_delta":
            return try turns[index].answer.append(event["delta"]?["text"]?.stringValue ?? "")
        case "content_block_stop", "message_stop":
            turns[index].answer.blockStopped()
            return false
        default:
            return false
        }
    }

    private mutating func startTool(_ block: JSONValue, at index: Int) -> [Action] {
        let toolID = block["id"]?.stringValue ?? ""
        // Claude Code may repeat a message's blocks; a tool starts once.
        guard turns[index].tools[toolID] == nil, turns[index].tools.count < 1_000 else { return [] }
        let input = block["input"] ?? .object([:])
        let tool = ToolActivity(
            id: toolID,
            name: block["name"]?.stringValue ?? "",
            label: ClaudeToolText.label(of: input),
            inputJSON: ClaudeToolText.inputJSON(input)
        )
        turns[index].tools[tool.id] = tool
        return [.emit(turn: turns[index].id, .toolStarted(tool))]
    }

    private mutating func endTool(_ block: JSONValue, at index: Int) -> [Action] {
        let toolID = block["tool_use_id"]?.stringValue ?? ""
        let started = turns[index].tools[toolID]
        turns[index].tools[toolID] = nil
        let tool = ToolActivity(
            id: toolID,
            name: started?.name ?? "unknown",
            label: started?.label,
            success: !(block["is_error"]?.boolValue ?? false),
            result: ClaudeToolText.resultText(block["content"])
        )
        return [.emit(turn: turns[index].id, .toolEnded(tool))]
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
}
