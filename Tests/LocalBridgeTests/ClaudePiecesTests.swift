import RelayCore
import Testing

@testable import LocalBridge

/// The small pure pieces under the claude-code backend: answer text, lines, results, command lines.
@Suite struct ClaudePiecesTests {
    @Test func deltasGrowABlockAndTheWholeBlockConfirmsOrReplacesThem() throws {
        var answer = ClaudeAnswer()
        #expect(try answer.blockStarted(isText: true, text: "") == false)
        #expect(try answer.append("Loo") && answer.append("king."))
        answer.blockStopped()
        #expect(try answer.confirm("Looking.") == false, "the assistant line repeats the deltas")
        #expect(try answer.append("Fix"), "a delta without a block start opens a new block")
        #expect(answer.text == "Looking.\n\nFix")
        #expect(try answer.confirm("Fixed."), "the whole block wins over its deltas")
        #expect(answer.text == "Looking.\n\nFixed.")
        #expect(try answer.blockStarted(isText: false, text: "") == false, "a tool block takes no deltas")
    }

    @Test func theFinalAnswerIsWhatStreamedEndingWithTheResult() throws {
        var answer = ClaudeAnswer()
        #expect(answer.final(result: "only the result") == "only the result")
        _ = try answer.confirm("Narration.")
        #expect(answer.final(result: "Summary.") == "Narration.\n\nSummary.", "progress stays a prefix of the answer")
        #expect(answer.final(result: "Narration.") == "Narration.")
        #expect(answer.final(result: nil) == "Narration.")
        var own = ClaudeAnswer()
        own.addSynthetic("## Context Usage")
        #expect(own.text.isEmpty && own.final(result: nil) == "## Context Usage")
    }

    @Test func linesAreCutWhereverReadsSplitThemAndOverlongOnesDropped() {
        var splitter = LineSplitter(limit: 8)
        var lines: [String] = []
        let collect: (ArraySlice<UInt8>) -> Void = { lines.append(String(decoding: $0, as: UTF8.self)) }
        #expect(splitter.split(Array("ab\ncd".utf8)[...], collect) == 0)
        #expect(splitter.split(Array("ef\n".utf8)[...], collect) == 0)
        #expect(lines == ["ab", "cdef"])
        #expect(splitter.split(Array("0123456789".utf8)[...], collect) == 1, "past the limit")
        #expect(splitter.split(Array("more\nok\n".utf8)[...], collect) == 0, "its rest is dropped up to its line break")
        #expect(lines == ["ab", "cdef", "ok"])
        #expect(splitter.split(Array("0123456789\nnext\n".utf8)[...], collect) == 1)
        #expect(lines.last == "next")
    }

    @Test func resultsSayWhyTheyFailed() throws {
        func result(_ json: String) throws -> ClaudeResult { ClaudeResult(try #require(JSONValue.parse(json))) }
        #expect(
            try result(#"{"subtype":"error_max_turns","is_error":true,"result":""}"#).failureReason
                == "Claude Code stopped: it reached its limit of turns"
        )
        #expect(
            try result(#"{"subtype":"error_during_execution","is_error":true,"errors":["[ede_diagnostic] x","disk full"]}"#).failureReason
                == "Claude Code failed: disk full"
        )
        #expect(
            try result(#"{"subtype":"error_during_execution","is_error":true,"terminal_reason":"aborted_tools","errors":["[ede_diagnostic] x"]}"#)
                .failureReason == "Claude Code reported error_during_execution (aborted_tools)"
        )
        #expect(
            try result(#"{"subtype":"success","is_error":true,"api_error_status":500,"result":"API Error: 500 Internal server error."}"#)
                .failureReason == "Claude Code API error 500: Internal server error."
        )
        #expect(try result(#"{"subtype":"success","is_error":false,"result":"ok"}"#).succeeded)
    }

    @Test func theCommandLineAsksThroughTheRelayAndCarriesTheModesAndRules() {
        var options = ClaudeCodeOptions()
        options.command = ["/opt/claude", "--debug"]
        options.extraArguments = ["--model", "sonnet"]
        let base = [
            "/opt/claude", "--debug", "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
            "--include-partial-messages", "--permission-prompt-tool", "stdio",
        ]
        #expect(options.arguments(resuming: nil) == base + ["--model", "sonnet"])
        options.permissionMode = .acceptEdits
        options.allowedTools = ["Bash(git status)", "Read"]
        options.disallowedTools = ["WebFetch"]
        #expect(
            options.arguments(resuming: "s-1")
                == base + [
                    "--permission-mode", "acceptEdits", "--allowedTools", "Bash(git status)", "--allowedTools", "Read", "--disallowedTools",
                    "WebFetch",
                    "--resume", "s-1", "--model", "sonnet",
                ]
        )
    }

    @Test func thinkingLevelsMapOntoClaudeCodesEffort() {
        let levels = ["off", "minimal", "low", "medium", "high", "adaptive", "xhigh", "max"]
        #expect(levels.map(ClaudeCodeOptions.effort(thinkingLevel:)) == ["low", "low", "low", "medium", "high", nil, "xhigh", "max"])
        #expect(ClaudeCodeOptions.effort(thinkingLevel: nil) == nil)
        #expect(ClaudeCodeOptions().arguments(resuming: "s", effort: "max").suffix(4) == ["--resume", "s", "--effort", "max"])
    }

    @Test func theVersionIsTheFirstWordOfClaudeVersion() {
        #expect(ClaudeCodeBackend.version(from: "2.1.332 (Claude Code)\n") == "2.1.332")
        #expect(ClaudeCodeBackend.version(from: "error: unknown option") == nil)
    }
}
