import CompanionWire
import Foundation
import RelayCore
import RelayTesting
import Testing

@testable import CompanionBridge

/// A backend that only has a version: what `welcome` shows of the default backend.
final class VersionedBackend: Backend {
    let name: String
    let agentVersion: String?

    init(name: String, agentVersion: String?) {
        self.name = name
        self.agentVersion = agentVersion
    }

    func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnHandle { TurnHandle {} }
}

/// What is not a run's answer: the relay's notes, status lines, tool results, the welcome's version.
@Suite struct CompanionNotesTests {
    @Test func welcomeCarriesTheDefaultBackendsClaudeCodeVersion() throws {
        let versioned = CompanionTestbed(backends: [VersionedBackend(name: "claude", agentVersion: "2.1.7"), ScriptedBackend.echo()])
        #expect(versioned.connect().welcome?["data"]?["claudeCodeVersion"] == .string("2.1.7"))
        var settings = CompanionSettings()
        settings.backend = "echo"
        let echo = CompanionTestbed(settings: settings, backends: [VersionedBackend(name: "claude", agentVersion: "2.1.7"), ScriptedBackend.echo()])
        #expect(echo.connect().welcome?["data"]?["claudeCodeVersion"] == .null, "the Companion backend has no Claude Code: null")
    }

    @Test func aNoteIsHistoryNeverTheRunningAnswer() throws {
        let backend = ScriptedBackend()
        let bed = CompanionTestbed(backends: [backend])
        let sid = try bed.session("app")
        let asker = bed.connect(device: "asker")
        let watcher = bed.connect(device: "watcher")
        try asker.subscribe(sid)
        try watcher.subscribe(sid)
        let id = asker.send("claudeCommand", .object(["command": .string("go"), "sessionId": .string(sid)]))
        bed.bed.settle()
        let run = try #require(backend.runs.first)
        run.emit(.progress("First paragraph.\n\nSecond"))
        bed.bed.settle()
        let conversation = bed.downstream.sessions.conversationID(ofSession: sid)
        bed.bed.hub.note("Claude Code wants to run Bash: `ls`.", userID: bed.settings.userID, conversationID: conversation)
        bed.bed.settle()
        run.emit(.final("First paragraph.\n\nSecond paragraph."))
        bed.bed.settle()
        for client in [asker, watcher] {
            _ = client.read()
            let frames = client.frames
            let notes = frames.of("assistantMessage").filter { $0["data"]?["type"] == .string("relay_note") }
            #expect(
                notes.count == 1
                    && notes.first?["data"]?["content"]
                        == .array([.object(["type": .string("text"), "text": .string("Claude Code wants to run Bash: `ls`.")])])
            )
            #expect(frames.texts(sid) == ["First paragraph.", "Second paragraph."], "the note is no chunk of the answer")
            #expect(frames.chunks(sid).filter { $0["type"] == .string("complete") }.count == 1)
            #expect(frames.of("conversationResult").map { $0["data"]?["result"] } == [.string("First paragraph.\n\nSecond paragraph.")])
        }
        let replies = asker.frames.filter { $0["requestId"]?.stringValue == id }
        #expect(replies.map { $0["data"]?["content"] } == [.string("First paragraph.\n\nSecond paragraph.")], "the command's one reply is its answer")
    }

    @Test func aNoteWaitsInTheQueueOfADeviceAway() throws {
        let bed = CompanionTestbed()
        let sid = try bed.session("app")
        let phone = bed.connect(device: "phone")
        try phone.subscribe(sid)
        phone.background(sid)
        bed.bed.settle()
        bed.bed.hub.note(
            "Bash `ls`: denied by tablet from clawline (4f2a).",
            userID: bed.settings.userID,
            conversationID: bed.downstream.sessions.conversationID(ofSession: sid)
        )
        bed.bed.settle()
        #expect(phone.read().isEmpty)
        try phone.subscribe(sid)
        let queued = phone.read()
        let note = try #require(queued.of("assistantMessage").only)
        #expect(note["_queued"] == .bool(true) && note["data"]?["type"] == .string("relay_note") && note["requestId"] == .null)
        #expect(queued.of("conversationResult").isEmpty && queued.of("claudeResponse").isEmpty)
    }

    @Test func toolResultsCarryTheirTextBounded() throws {
        let backend = ScriptedBackend()
        let bed = CompanionTestbed(backends: [backend])
        let sid = try bed.session("app")
        let client = bed.connect()
        try client.subscribe(sid)
        client.send("claudeCommand", .object(["command": .string("go"), "sessionId": .string(sid)]))
        bed.bed.settle()
        let run = try #require(backend.runs.first)
        run.emit(.toolEnded(ToolActivity(id: "t1", name: "Bash", success: true, result: "total 0\n")))
        run.emit(.toolEnded(ToolActivity(id: "t2", name: "Read", success: false, result: String(repeating: "é", count: 10_000))))
        run.emit(.toolEnded(ToolActivity(id: "t3", name: "Edit", success: false)))
        run.emit(.status("API overloaded, retrying 2/10"))
        bed.bed.settle()
        let frames = client.read()
        let results = frames.of("toolResult").compactMap { $0["data"] }
        #expect(results.count == 3)
        #expect(results.first?["result"] == .string("total 0\n") && results.first?["success"] == .bool(true) && results.first?["error"] == nil)
        let long = try #require(results.dropFirst().first?["result"]?.stringValue)
        #expect(long.utf8.count <= ToolActivity.resultLimit && long.hasSuffix("…") && results.dropFirst().first?["error"]?.stringValue == long)
        #expect(results.last?["result"] == .string("") && results.last?["error"] == .string("Edit failed"))
        let status = try #require(frames.of("progress").only?["data"])
        #expect(status["stage"] == .string("status") && status["message"] == .string("API overloaded, retrying 2/10"))
    }
}
