import RelayCore

/// The lines the relay writes to Claude Code's stdin (`--input-format stream-json`), each one
/// JSON object ending with a line break.
enum ClaudeInput {
    /// A user turn. `uuid` comes back in Claude Code's `command_lifecycle` lines (queued,
    /// started, completed), which is how the turn's output is told from a background agent's.
    static func user(_ text: String, attachments: [JSONValue] = [], uuid: String) -> String {
        // Text alone stays a string, as Claude Code's own clients send it.
        let content: JSONValue =
            attachments.isEmpty
            ? .string(text) : .array((text.isEmpty ? [] : [.object(["type": .string("text"), "text": .string(text)])]) + attachments)
        return line([
            "type": .string("user"),
            "message": .object(["role": .string("user"), "content": content]),
            "parent_tool_use_id": .null,
            "session_id": .string("default"),
            "uuid": .string(uuid),
        ])
    }

    /// Switches the permission mode for the turns written after it (`plan`: Claude only reads and plans).
    static func setPermissionMode(_ mode: String, requestID: String) -> String {
        line([
            "type": .string("control_request"), "request_id": .string(requestID),
            "request": .object(["subtype": .string("set_permission_mode"), "mode": .string(mode)]),
        ])
    }

    /// Stops what the current turn does (its running tools too); the process takes the next turn.
    static func interrupt(requestID: String) -> String {
        line(["type": .string("control_request"), "request_id": .string(requestID), "request": .object(["subtype": .string("interrupt")])])
    }

    /// Lets a tool run with its input as asked; `rules` (the CLI's suggested `addRules`, kept for
    /// this session only) let the same call run again without asking.
    static func allow(requestID: String, input: JSONValue, rules: [JSONValue]) -> String {
        var response: [String: JSONValue] = ["behavior": .string("allow"), "updatedInput": input]
        if !rules.isEmpty { response["updatedPermissions"] = .array(rules) }
        return success(requestID: requestID, response: .object(response))
    }

    /// Refuses a tool call; Claude sees `message`.
    static func deny(requestID: String, message: String) -> String {
        success(requestID: requestID, response: .object(["behavior": .string("deny"), "message": .string(message)]))
    }

    /// The answer to a control request the relay does not handle (so Claude Code does not wait for one).
    static func unsupported(requestID: String, subtype: String) -> String {
        line([
            "type": .string("control_response"),
            "response": .object([
                "subtype": .string("error"), "request_id": .string(requestID),
                "error": .string("the relay does not handle \(subtype.prefix(64)) requests"),
            ]),
        ])
    }

    /// The CLI's suggested `addRules` entries with their destination set to `session`: an
    /// always-allow never writes the project's or the user's settings files.
    static func sessionRules(from suggestions: [JSONValue]) -> [JSONValue] {
        suggestions.compactMap { suggestion in
            guard case .object(var fields) = suggestion, fields["type"]?.stringValue == "addRules",
                fields["behavior"]?.stringValue == "allow", let rules = fields["rules"]?.arrayValue, !rules.isEmpty
            else { return nil }
            fields["destination"] = .string("session")
            return .object(fields)
        }
    }

    private static func success(requestID: String, response: JSONValue) -> String {
        line([
            "type": .string("control_response"),
            "response": .object(["subtype": .string("success"), "request_id": .string(requestID), "response": response]),
        ])
    }

    private static func line(_ fields: [String: JSONValue]) -> String { JSONValue.object(fields).encoded() + "\n" }
}
