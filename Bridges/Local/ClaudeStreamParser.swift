import Foundation
import RelayCore

/// Claude Code's `--output-format stream-json --verbose` output (Claude Code 1.0.x–2.x), one line
/// at a time, as a turn's events. Pure: no I/O, no clock.
///
/// The answer is every assistant text block of the run, joined by a blank line: what people saw
/// stream is what is stored. `.grew` says the answer grew; before any other event the parser hands
/// out the answer as it stood (`.event(.progress)`), so text and tools keep the order the stream
/// had. Lines it cannot read are counted and skipped; a stream without a `result` fails at the end.
struct ClaudeStreamParser: Sendable {
    /// The `result` line: how Claude Code says the run ended.
    struct Completion: Sendable, Equatable {
        var success: Bool
        /// `success`, `error_max_turns`, `error_during_execution`, ...
        var subtype: String
        var text: String
    }

    /// Largest answer accepted, in UTF-8 bytes.
    static let answerLimit = 1 << 20

    /// The session Claude Code was asked to resume, if any.
    let resumed: String?
    /// The session id as the stream last said it.
    private(set) var sessionID: String?
    /// The whole answer so far.
    private(set) var text = ""
    private(set) var completion: Completion?
    /// Lines that were not JSON objects, and the first of them (cut short) for the failure's reason.
    private(set) var unreadable = 0
    private(set) var firstUnreadable: String?
    private(set) var linesRead = 0

    /// Text blocks in order; `blocks[..<confirmed]` came from `assistant` lines, the rest from deltas.
    private var blocks: [String] = []
    private var confirmed = 0
    /// Whether partial-message deltas go to the last block.
    private var deltaOpen = false
    /// Whether the answer grew since it was last handed out whole, and during the current line.
    private var unsent = false
    private var grew = false
    /// Tools started and not ended, by id.
    private var tools: [String: ToolActivity] = [:]

    init(resumed: String? = nil) { self.resumed = resumed }

    var isComplete: Bool { completion != nil }

    /// One line of output, without its line break.
    mutating func parse(line: some Collection<UInt8>) throws(ChildOutputError) -> [ChildOutput] {
        guard line.contains(where: { !Self.isBlank($0) }) else { return [] }
        linesRead += 1
        grew = false
        guard let json = JSONValue.parse(line), json.objectValue != nil else {
            unreadable += 1
            if firstUnreadable == nil { firstUnreadable = String(String(decoding: line, as: UTF8.self).prefix(120)) }
            return []
        }
        var found: [ChildOutput] = []
        switch json["type"]?.stringValue {
        case "system" where json["subtype"]?.stringValue == "init":
            noteSession(json["session_id"], into: &found)
        case "assistant":
            for block in json["message"]?["content"]?.arrayValue ?? [] {
                switch block["type"]?.stringValue {
                case "text": try confirm(block["text"]?.stringValue ?? "", into: &found)
                case "tool_use": startTool(block, into: &found)
                default: break
                }
            }
        case "user":
            for block in json["message"]?["content"]?.arrayValue ?? [] where block["type"]?.stringValue == "tool_result" {
                endTool(block, into: &found)
            }
        case "stream_event":
            try streamEvent(json["event"] ?? .null, into: &found)
        case "result":
            let subtype = json["subtype"]?.stringValue ?? ""
            let failed = json["is_error"]?.boolValue ?? (subtype != "success")
            completion = Completion(success: !failed && subtype == "success", subtype: subtype, text: json["result"]?.stringValue ?? "")
            noteSession(json["session_id"], into: &found)
        default:
            break
        }
        if grew, unsent { found.append(.grew) }
        return found
    }

    /// `--include-partial-messages`: text deltas grow the last block until its `assistant` line.
    private mutating func streamEvent(_ event: JSONValue, into found: inout [ChildOutput]) throws(ChildOutputError) {
        switch event["type"]?.stringValue {
        case "content_block_start":
            deltaOpen = false
            if event["content_block"]?["type"]?.stringValue == "text" { try append(event["content_block"]?["text"]?.stringValue ?? "") }
        case "content_block_delta" where event["delta"]?["type"]?.stringValue == "text_delta":
            try append(event["delta"]?["text"]?.stringValue ?? "")
        case "content_block_stop", "message_stop":
            deltaOpen = false
        default:
            break
        }
    }

    /// Adds delta text to the open block, opening one when none is.
    private mutating func append(_ delta: String) throws(ChildOutputError) {
        if !deltaOpen {
            blocks.append("")
            deltaOpen = true
        }
        guard !delta.isEmpty else { return }
        if blocks[blocks.count - 1].isEmpty, !text.isEmpty { text += "\n\n" }
        blocks[blocks.count - 1] += delta
        text += delta
        (unsent, grew) = (true, true)
        try checkSize()
    }

    /// A whole text block from an `assistant` line: it replaces what deltas made of it, or comes new.
    private mutating func confirm(_ block: String, into found: inout [ChildOutput]) throws(ChildOutputError) {
        deltaOpen = false
        if confirmed < blocks.count {
            if blocks[confirmed] != block {
                blocks[confirmed] = block
                text = blocks.filter { !$0.isEmpty }.joined(separator: "\n\n")
                (unsent, grew) = (true, true)
            }
        } else {
            blocks.append(block)
            if !block.isEmpty {
                text += (text.isEmpty ? "" : "\n\n") + block
                (unsent, grew) = (true, true)
            }
        }
        confirmed += 1
        try checkSize()
    }

    private func checkSize() throws(ChildOutputError) {
        if text.utf8.count > Self.answerLimit { throw ChildOutputError(reason: "the answer is larger than \(Self.answerLimit >> 20) MiB") }
    }

    private mutating func startTool(_ block: JSONValue, into found: inout [ChildOutput]) {
        let input = block["input"] ?? .object([:])
        let tool = ToolActivity(
            id: block["id"]?.stringValue ?? "",
            name: block["name"]?.stringValue ?? "",
            label: Self.label(of: input),
            inputJSON: Self.inputJSON(input)
        )
        tools[tool.id] = tool
        send(.toolStarted(tool), into: &found)
    }

    private mutating func endTool(_ block: JSONValue, into found: inout [ChildOutput]) {
        let id = block["tool_use_id"]?.stringValue ?? ""
        let started = tools.removeValue(forKey: id)
        let tool = ToolActivity(id: id, name: started?.name ?? "unknown", label: started?.label, success: !(block["is_error"]?.boolValue ?? false))
        send(.toolEnded(tool), into: &found)
    }

    private mutating func noteSession(_ value: JSONValue?, into found: inout [ChildOutput]) {
        guard let id = value?.stringValue, !id.isEmpty, id != sessionID else { return }
        sessionID = id
        send(.backendSession(id), into: &found)
    }

    /// An event that is not text: the answer as it stands goes first.
    private mutating func send(_ event: TurnEvent, into found: inout [ChildOutput]) {
        if unsent {
            found.append(.event(.progress(text)))
            unsent = false
        }
        found.append(.event(event))
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
}
