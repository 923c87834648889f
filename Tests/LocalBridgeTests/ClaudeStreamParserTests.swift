import RelayCore
import Testing

@testable import LocalBridge

/// Lines in the shape Claude Code 1.x/2.x prints with `-p --output-format stream-json --verbose`.
enum Stream {
    static let initLine = #"{"type":"system","subtype":"init","cwd":"/srv/app","session_id":"s-1","tools":["Bash"],"mcp_servers":[]}"#
    static func text(_ text: String) -> String {
        #"{"type":"assistant","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"\#(text)"}]},"session_id":"s-1"}"#
    }
    static let bash =
        #"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls -la\nwc -l","description":"List"}}]},"session_id":"s-1"}"#
    static func toolResult(_ id: String, isError: Bool) -> String {
        #"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"\#(id)","is_error":\#(isError),"content":"out"}]},"session_id":"s-1"}"#
    }
    static func result(_ text: String, subtype: String = "success", isError: Bool = false, session: String = "s-1") -> String {
        #"{"type":"result","subtype":"\#(subtype)","is_error":\#(isError),"result":"\#(text)","session_id":"\#(session)","num_turns":2}"#
    }
    static func delta(_ text: String) -> String {
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\#(text)"}},"session_id":"s-1"}"#
    }
    static func event(_ type: String) -> String {
        #"{"type":"stream_event","event":{"type":"\#(type)","index":0,"content_block":{"type":"text","text":""}},"session_id":"s-1"}"#
    }
}

@Suite struct ClaudeStreamParserTests {
    static let bashStarted = ToolActivity(
        id: "toolu_1",
        name: "Bash",
        label: "ls -la",
        inputJSON: #"{"command":"ls -la\nwc -l","description":"List"}"#
    )

    private func feed(_ parser: inout ClaudeStreamParser, _ line: String) throws -> [ChildOutput] {
        try parser.parse(line: Array(line.utf8))
    }

    @Test func aWholeSessionBecomesSessionTextToolsAndTheAnswer() throws {
        var parser = ClaudeStreamParser()
        #expect(try feed(&parser, Stream.initLine) == [.event(.backendSession("s-1"))])
        #expect(try feed(&parser, Stream.text("Looking.")) == [.grew])
        #expect(parser.text == "Looking.")
        #expect(try feed(&parser, Stream.bash) == [.event(.progress("Looking.")), .event(.toolStarted(Self.bashStarted))])
        #expect(
            try feed(&parser, Stream.toolResult("toolu_1", isError: false)) == [
                .event(.toolEnded(ToolActivity(id: "toolu_1", name: "Bash", label: "ls -la", success: true)))
            ]
        )
        #expect(try feed(&parser, Stream.text("Done.")) == [.grew])
        #expect(parser.text == "Looking.\n\nDone.")
        #expect(!parser.isComplete)
        #expect(try feed(&parser, Stream.result("Done.")) == [], "the same session id is not reported twice")
        #expect(parser.isComplete)
        #expect(parser.ending(.exited(0), stderr: "") == [.final("Looking.\n\nDone.")], "what streamed is what is stored")
    }

    @Test func aFailedToolAndAnUnknownToolEnd() throws {
        var parser = ClaudeStreamParser()
        _ = try feed(&parser, Stream.bash)
        #expect(
            try feed(&parser, Stream.toolResult("toolu_1", isError: true)) == [
                .event(.toolEnded(ToolActivity(id: "toolu_1", name: "Bash", label: "ls -la", success: false)))
            ]
        )
        #expect(
            try feed(&parser, Stream.toolResult("toolu_9", isError: false)) == [
                .event(.toolEnded(ToolActivity(id: "toolu_9", name: "unknown", success: true)))
            ]
        )
    }

    @Test func aNewSessionIDInTheResultIsReported() throws {
        var parser = ClaudeStreamParser(resumed: "s-0")
        _ = try feed(&parser, Stream.initLine)
        #expect(try feed(&parser, Stream.result("ok", session: "s-2")) == [.event(.backendSession("s-2"))])
        #expect(parser.sessionID == "s-2")
    }

    @Test func theResultTextIsTheAnswerWhenNothingStreamedAndIsAppendedWhenItDiffers() throws {
        var bare = ClaudeStreamParser()
        _ = try feed(&bare, Stream.result("only the result"))
        #expect(bare.ending(.exited(0), stderr: "") == [.final("only the result")])
        var differs = ClaudeStreamParser()
        _ = try feed(&differs, Stream.text("Narration."))
        _ = try feed(&differs, Stream.result("Summary."))
        #expect(differs.ending(.exited(0), stderr: "") == [.final("Narration.\n\nSummary.")], "progress stays a prefix of the answer")
        var empty = ClaudeStreamParser()
        _ = try feed(&empty, Stream.text("All said."))
        _ = try feed(&empty, Stream.result(""))
        #expect(empty.ending(.exited(0), stderr: "") == [.final("All said.")])
    }

    @Test func errorResultsFailWithTheirSubtype() throws {
        var during = ClaudeStreamParser()
        _ = try feed(&during, Stream.result("", subtype: "error_during_execution", isError: true))
        #expect(during.ending(.exited(1), stderr: "boom") == [.failed("Claude Code reported error_during_execution")])
        var turns = ClaudeStreamParser()
        _ = try feed(&turns, Stream.result("stopped early", subtype: "error_max_turns", isError: false))
        #expect(turns.ending(.exited(0), stderr: "") == [.failed("Claude Code reported error_max_turns: stopped early")])
        var flagged = ClaudeStreamParser()
        _ = try feed(&flagged, Stream.result("Invalid API key", subtype: "success", isError: true))
        #expect(flagged.ending(.exited(0), stderr: "") == [.failed("Claude Code reported success: Invalid API key")])
    }

    @Test func partialMessageDeltasStreamAndTheWholeMessageConfirmsThem() throws {
        var parser = ClaudeStreamParser()
        #expect(try feed(&parser, Stream.event("content_block_start")) == [])
        #expect(try feed(&parser, Stream.delta("Loo")) == [.grew])
        #expect(try feed(&parser, Stream.delta("king.")) == [.grew])
        #expect(try feed(&parser, Stream.event("content_block_stop")) == [])
        #expect(parser.text == "Looking.")
        #expect(try feed(&parser, Stream.text("Looking.")) == [], "the assistant line repeats the deltas: no growth")
        #expect(try feed(&parser, Stream.delta("Fix")) == [.grew], "a delta without a block start opens a new block")
        #expect(parser.text == "Looking.\n\nFix")
        #expect(try feed(&parser, Stream.text("Fixed.")) == [.grew], "the whole block wins over its deltas")
        #expect(parser.text == "Looking.\n\nFixed.")
        #expect(try feed(&parser, Stream.bash).first == .event(.progress("Looking.\n\nFixed.")))
    }

    @Test func unreadableLinesAreSkippedAndNamedWhenNoResultCame() throws {
        var parser = ClaudeStreamParser()
        #expect(try feed(&parser, "not json at all") == [])
        #expect(try feed(&parser, "[1, 2]") == [], "JSON that is not an object is unreadable too")
        #expect(try feed(&parser, "   ") == [], "blank lines are nothing")
        #expect(try feed(&parser, #"{"type":"rate_limit_event","info":{}}"#) == [], "unknown types are ignored")
        #expect(try feed(&parser, #"{"type":"system","subtype":"compact_boundary"}"#) == [])
        #expect(parser.unreadable == 2)
        #expect(
            parser.ending(.exited(0), stderr: "")
                == [.failed("Claude Code ended without a result; 2 unreadable lines of output, the first: not json at all")]
        )
        _ = try feed(&parser, Stream.result("fine"))
        #expect(parser.ending(.exited(0), stderr: "") == [.final("fine")], "a result makes the garbage harmless")
    }

    @Test func aMissingResultFailsWithTheExitAndStderr() throws {
        var parser = ClaudeStreamParser()
        _ = try feed(&parser, Stream.initLine)
        _ = try feed(&parser, Stream.text("half an answer"))
        #expect(
            parser.ending(.exited(3), stderr: "fatal: no network") == [
                .failed("Claude Code exited with status 3 without a result; stderr: fatal: no network")
            ]
        )
        #expect(parser.ending(.signaled(9), stderr: "") == [.failed("Claude Code was killed by signal 9 without a result")])
    }

    @Test func aRefusedResumeForgetsTheSession() throws {
        let refused = ClaudeStreamParser(resumed: "s-old")
        let stderr = "No conversation found with session ID: s-old"
        let events = refused.ending(.exited(1), stderr: stderr)
        #expect(events.first == .backendSession(nil))
        guard case .failed(let reason)? = events.last else {
            Issue.record("expected a failure: \(events)")
            return
        }
        #expect(reason.hasPrefix("could not resume Claude Code session s-old") && reason.contains(stderr))
        var started = ClaudeStreamParser(resumed: "s-old")
        _ = try feed(&started, Stream.initLine)
        #expect(started.ending(.exited(1), stderr: stderr).count == 1, "a session that started keeps its id")
        #expect(ClaudeStreamParser(resumed: "s-old").ending(.exited(1), stderr: "out of memory").count == 1, "other failures keep it")
    }

    @Test func anAnswerPastTheLimitFails() throws {
        var parser = ClaudeStreamParser()
        let big = String(repeating: "y", count: ClaudeStreamParser.answerLimit / 2 + 1)
        _ = try feed(&parser, Stream.text(big))
        #expect(throws: ChildOutputError.self) { try parser.parse(line: Array(Stream.text(big).utf8)) }
    }

    @Test func largeToolInputsAreShortenedOrDropped() {
        let content = String(repeating: "z", count: 40_000)
        let write = JSONValue.object(["file_path": .string("/srv/app/big.txt"), "content": .string(content)])
        let shown = ClaudeStreamParser.inputJSON(write)
        #expect(shown.utf8.count <= ToolActivity.inputLimit)
        #expect(JSONValue.parse(shown)?["file_path"] == .string("/srv/app/big.txt"))
        #expect(JSONValue.parse(shown)?["content"]?.stringValue?.count == ClaudeStreamParser.shortenedField + 1)
        let many = JSONValue.object(Dictionary(uniqueKeysWithValues: (0..<2_000).map { ("key\($0)", JSONValue.string("value \($0)")) }))
        #expect(ClaudeStreamParser.inputJSON(many) == "{}")
        #expect(ClaudeStreamParser.inputJSON(.string("not an object")) == "{}")
        #expect(ClaudeStreamParser.label(of: write) == "/srv/app/big.txt")
        #expect(ClaudeStreamParser.label(of: .object(["todos": .array([])])) == nil)
    }
}
