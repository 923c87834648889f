import Foundation
import RelayCore

/// What the real Claude Companion iOS app (dock108/aicli-companion at f006a15) decodes: the same
/// checks as `Tests/e2e/companion_decode.py`, so an in-memory test fails when a frame would be
/// dropped by the app.
enum AppDecoder {
    private enum Check {
        case string
        case bool
        case int
        case number
        case object
        case strings
        case iso
        case usage
        case cliResult
        case chunk
        case blocks
    }

    private typealias Schema = [String: (Check, required: Bool)]

    private static let usage: Schema = [
        "input_tokens": (.int, true), "output_tokens": (.int, true), "cache_creation_input_tokens": (.int, false),
        "cache_read_input_tokens": (.int, false), "server_tool_use": (.object, false), "service_tier": (.string, false),
    ]
    private static let cliResult: Schema = [
        "type": (.string, true), "subtype": (.string, true), "is_error": (.bool, true), "duration_ms": (.number, true),
        "duration_api_ms": (.number, false), "num_turns": (.int, true), "result": (.string, true), "session_id": (.string, true),
        "total_cost_usd": (.number, false), "usage": (.usage, false),
    ]
    private static let chunk: Schema = [
        "id": (.string, true), "type": (.string, true), "content": (.string, true), "isFinal": (.bool, true), "metadata": (.object, false),
    ]
    private static let block: Schema = [
        "type": (.string, true), "text": (.string, false), "name": (.string, false), "input": (.object, false), "id": (.string, false),
    ]
    private static let schemas: [String: Schema] = [
        "welcome": [
            "clientId": (.string, true), "serverVersion": (.string, true), "claudeCodeVersion": (.string, false), "capabilities": (.strings, true),
            "maxSessions": (.int, true),
        ],
        "askResponse": ["success": (.bool, true), "response": (.cliResult, false), "error": (.string, false)],
        "streamStarted": ["sessionId": (.string, true), "sessionName": (.string, false), "workingDirectory": (.string, true)],
        "error": ["code": (.string, true), "message": (.string, true), "details": (.object, false)],
        "sessionStatus": ["sessionId": (.string, true), "status": (.string, true), "lastActivity": (.iso, true), "messageCount": (.int, true)],
        "pong": ["serverTime": (.iso, true)],
        "claudeResponse": ["content": (.string, true), "success": (.bool, true), "sessionId": (.string, false), "error": (.string, false)],
        "subscribed": ["events": (.strings, true), "sessionIds": (.strings, true), "success": (.bool, true)],
        "assistantMessage": [
            "type": (.string, true), "messageId": (.string, false), "content": (.blocks, true), "model": (.string, false), "usage": (.usage, false),
            "timestamp": (.iso, true),
        ],
        "toolUse": [
            "type": (.string, true), "toolName": (.string, true), "toolInput": (.object, true), "toolId": (.string, true), "timestamp": (.iso, true),
        ],
        "toolResult": [
            "type": (.string, true), "toolName": (.string, true), "toolId": (.string, true), "result": (.string, false), "success": (.bool, true),
            "error": (.string, false), "timestamp": (.iso, true),
        ],
        "conversationResult": [
            "type": (.string, true), "success": (.bool, true), "result": (.string, false), "sessionId": (.string, false),
            "duration": (.number, false),
            "timestamp": (.iso, true),
        ],
        "workingDirectorySet": ["workingDirectory": (.string, true), "success": (.bool, true)],
        "streamChunk": ["sessionId": (.string, true), "chunk": (.chunk, true)],
        "deviceRegistered": ["success": (.bool, true), "message": (.string, false)],
        "permissionRequest": [
            "sessionId": (.string, true), "prompt": (.string, true), "options": (.strings, true), "defaultOption": (.string, true),
            "timeout": (.number, true),
        ],
        "progress": [
            "sessionId": (.string, true), "stage": (.string, true), "progress": (.number, false), "message": (.string, true),
            "timestamp": (.iso, true),
        ],
        // The real server's reply to `permission`: the app has no decoder for it and ignores it.
        "permission": ["success": (.bool, true), "sessionId": (.string, true), "accepted": (.bool, true), "message": (.string, true)],
        // A relay extension the app ignores.
        "userMessage": [
            "sessionId": (.string, true), "messageId": (.string, true), "content": (.string, true), "deviceId": (.string, true),
            "timestamp": (.iso, true),
        ],
    ]
    private static let clientTypes: Set = [
        "ask", "streamStart", "streamSend", "streamClose", "ping", "subscribe", "setWorkingDirectory", "claudeCommand", "registerDevice",
    ]
    private static let broadcasts: Set = [
        "welcome", "streamChunk", "assistantMessage", "conversationResult", "userMessage", "toolUse", "toolResult", "permissionRequest", "progress",
    ]

    /// Why the app would drop `frame`; empty when it decodes.
    static func problems(_ frame: JSONValue) -> [String] {
        guard case .object(let fields) = frame, let type = fields["type"]?.stringValue else { return ["not an object with a string type: \(frame)"] }
        var out: [String] = []
        if !isISO(fields["timestamp"]) { out.append("timestamp must be ISO 8601") }
        switch fields["requestId"] {
        case nil: out.append("requestId must be present")
        case .null?: break
        case .string?: if broadcasts.contains(type) { out.append("a \(type) is a broadcast and must carry requestId null") }
        default: out.append("requestId must be a string or null")
        }
        if case .object(let data)? = fields["data"] {
            if clientTypes.contains(type) {
                out.append("\(type) is a client type")
            } else if let schema = schemas[type] {
                check(data, schema, "data", &out)
                if type == "error", data["message"]?.stringValue == "" { out.append("data.message must not be empty") }
                if type == "claudeResponse", data["success"] == .bool(false), (data["error"]?.stringValue ?? "").isEmpty {
                    out.append("a failed claudeResponse carries a non-empty error")
                }
                // MessageValidator drops a toolResult with neither.
                if type == "toolResult", data["result"]?.stringValue == nil, data["error"]?.stringValue == nil {
                    out.append("a toolResult carries result or error")
                }
                if type == "permission", fields["requestId"]?.stringValue == nil { out.append("permission is only a reply") }
            } else {
                out.append("\(type) is unknown to the app")
            }
        } else {
            out.append("data must be an object")
        }
        if ["_queued", "_queuedAt", "_originalTimestamp"].contains(where: { fields[$0] != nil }) {
            if fields["_queued"] != .bool(true) || !isISO(fields["_queuedAt"]) || !isISO(fields["_originalTimestamp"]) {
                out.append("a queued frame carries _queued:true, _queuedAt and _originalTimestamp")
            }
        }
        return out.map { "\(type): \($0)" }
    }

    private static func check(_ object: [String: JSONValue], _ schema: Schema, _ place: String, _ out: inout [String]) {
        for (key, rule) in schema {
            guard let value = object[key], value != .null else {
                if rule.required { out.append("\(place).\(key) is required") }
                continue
            }
            let at = "\(place).\(key)"
            switch rule.0 {
            case .usage, .cliResult, .chunk:
                guard case .object(let nested) = value else {
                    out.append("\(at) must be an object")
                    continue
                }
                check(nested, rule.0 == .usage ? usage : rule.0 == .cliResult ? cliResult : chunk, at, &out)
                if rule.0 == .chunk { checkChunk(nested, at, &out) }
            case .blocks:
                guard case .array(let blocks) = value, !blocks.isEmpty else {
                    out.append("\(at) must be a non-empty array of blocks")
                    continue
                }
                for (index, item) in blocks.enumerated() {
                    if case .object(let nested) = item {
                        check(nested, block, "\(at)[\(index)]", &out)
                    } else {
                        out.append("\(at)[\(index)] must be an object")
                    }
                }
            default:
                if !matches(value, rule.0) { out.append("\(at) has the wrong type: \(value)") }
            }
        }
    }

    private static func checkChunk(_ chunk: [String: JSONValue], _ place: String, _ out: inout [String]) {
        let metadata = chunk["metadata"]?.objectValue
        for key in ["language", "level", "toolName"] where chunk[key] != nil { out.append("\(place).\(key) is top-level") }
        let (kind, content) = (chunk["type"]?.stringValue ?? "", chunk["content"]?.stringValue)
        if ["text", "content"].contains(kind), let content, content.allSatisfy(\.isWhitespace) { out.append("\(place): a blank \(kind) chunk") }
        if ["code", "header", "section", "list", "tool_result"].contains(kind), content == "" { out.append("\(place): an empty \(kind) chunk") }
        if kind == "tool_use", (metadata?["toolName"]?.stringValue ?? "").isEmpty {
            out.append("\(place): a tool_use chunk without metadata.toolName")
        }
    }

    private static func matches(_ value: JSONValue, _ check: Check) -> Bool {
        switch (check, value) {
        case (.string, .string), (.bool, .bool), (.int, .int), (.number, .int), (.number, .double), (.object, .object): true
        case (.strings, .array(let items)): items.allSatisfy { $0.stringValue != nil }
        case (.iso, _): isISO(value)
        default: false
        }
    }

    /// ISO 8601 with `Z` or `±hh:mm` and at most 3 fractional digits.
    static func isISO(_ value: JSONValue?) -> Bool {
        guard let text = value?.stringValue else { return false }
        let pattern = #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})$"#
        return text.range(of: pattern, options: .regularExpression) != nil
    }
}
