import CompanionWire
import Foundation
import RelayCore
import RelayTesting
import Testing

@testable import CompanionBridge

/// The real app's chat path in memory: one turn's frames in the app's order, sessions adopted,
/// failures as `claudeResponse`, and what the other sockets of a session see.
@Suite struct CompanionChatTests {
    /// The order companion.md gives for one turn as the asking socket sees it; returns its chunks.
    @discardableResult
    static func checkTurn(_ turn: CompanionTurn, session: String, answer: String) -> [JSONValue] {
        let reply = turn.reply
        #expect(reply["type"] == .string("claudeResponse"), "the first frame with the command's requestId: \(reply)")
        #expect(reply["data"]?["content"] == .string(answer) && reply["data"]?["success"] == .bool(true))
        #expect(reply["data"]?["sessionId"] == .string(session) && reply["data"]?["error"] == .null)
        #expect((turn.before + turn.after).allSatisfy { $0["requestId"] == .null }, "broadcasts carry requestId null")
        #expect(turn.after.of("streamChunk").isEmpty, "every chunk comes before the claudeResponse")
        let chunks = turn.before.chunks(session)
        let texts = turn.before.texts(session)
        #expect(!texts.isEmpty && texts.joined(separator: "\n\n") == answer, "text chunks are the answer's paragraphs")
        #expect(chunks.last?["type"] == .string("complete") && chunks.last?["content"] == .string("") && chunks.last?["isFinal"] == .bool(true))
        #expect(chunks.filter { $0["type"] == .string("complete") }.count == 1)
        #expect(chunks.map { $0["id"]?.stringValue ?? "" } == chunks.indices.map { "chunk-\($0)" }, "ids chunk-N from 0")
        let frames = turn.frames
        let complete = frames.firstIndex { $0["data"]?["chunk"]?["type"] == .string("complete") } ?? -1
        let message = frames.firstIndex { $0["type"] == .string("assistantMessage") } ?? -1
        let result = frames.firstIndex { $0["type"] == .string("conversationResult") && $0["data"]?["sessionId"] == .string(session) } ?? -1
        #expect(frames.of("assistantMessage").count == 1 && frames.of("conversationResult").count == 1)
        #expect(complete >= 0 && complete < message && complete < result, "they follow the complete chunk")
        #expect(frames[max(0, message)]["data"]?["content"] == .array([.object(["type": .string("text"), "text": .string(answer)])]))
        let data = frames[max(0, result)]["data"]
        #expect(data?["type"] == .string("final_result") && data?["success"] == .bool(true) && data?["result"] == .string(answer))
        return chunks
    }

    @Test func theRealAppsChatPath() throws {
        let bed = CompanionTestbed()
        let started = try bed.startProject("app")
        #expect(started["success"] == .bool(true) && started["message"]?.stringValue != nil)
        let session = try #require(started["session"])
        for key in ["sessionId", "projectName", "projectPath", "status", "startedAt"] {
            #expect(session[key]?.stringValue?.isEmpty == false, "\(key)")
        }
        #expect(
            session["projectName"] == .string("app") && session["projectPath"] == .string(bed.path("app")) && session["status"] == .string("running")
        )
        let sid = try #require(session["sessionId"]?.stringValue)
        let client = bed.connect()
        let (subscribed, queued) = try client.subscribe(sid)
        #expect(queued.isEmpty && subscribed["data"]?["sessionIds"] == .array([.string(sid)]))
        Self.checkTurn(try client.command("hello relay", session: sid, path: bed.path("app")), session: sid, answer: "echo: hello relay")
        let again = Self.checkTurn(try client.command("and again", session: sid, path: bed.path("app")), session: sid, answer: "echo: and again")
        #expect(again.first?["id"] == .string("chunk-0"), "chunk numbering restarts every turn")
    }

    @Test func aResetSessionGoesOnUnderItsIdWithAFreshConversation() throws {
        let bed = CompanionTestbed()
        let sid = try #require(try bed.startProject("app")["session"]?["sessionId"]?.stringValue)
        let client = bed.connect()
        _ = try client.subscribe(sid)
        Self.checkTurn(try client.command("before", session: sid, path: bed.path("app")), session: sid, answer: "echo: before")
        // `/new` is the relay's (OpenClaw's gateway command): the session's keys move to a fresh conversation.
        _ = try client.command("/new", session: sid, path: bed.path("app"))
        Self.checkTurn(try client.command("after", session: sid, path: bed.path("app")), session: sid, answer: "echo: after")
    }

    @Test func eachParagraphIsOneChunk() throws {
        let bed = CompanionTestbed()
        let sid = try bed.session("app")
        let turn = try bed.connect().command("first paragraph\n\nsecond paragraph", session: sid, path: bed.path("app"))
        Self.checkTurn(turn, session: sid, answer: "echo: first paragraph\n\nsecond paragraph")
        #expect(turn.before.texts(sid) == ["echo: first paragraph", "second paragraph"])
    }

    @Test func streamedProgressGoesOutParagraphByParagraphAndTheRestAtTheEnd() throws {
        let backend = ScriptedBackend()
        let bed = CompanionTestbed(backends: [backend])
        let sid = try bed.session("app")
        let client = bed.connect()
        let id = client.send(
            "claudeCommand",
            .object(["command": .string("go"), "sessionId": .string(sid), "projectPath": .string(bed.path("app"))])
        )
        let run = try #require(backend.runs.first)
        run.emit(.progress("One.\n\nTw"))
        bed.bed.settle()
        #expect(client.read().texts(sid) == ["One."], "a finished paragraph goes out at once")
        run.emit(.progress("One.\n\nTwo.\n\nThr"))
        bed.bed.settle()
        #expect(client.read().texts(sid) == ["Two."])
        run.emit(.final("One.\n\nTwo.\n\nThree."))
        bed.bed.settle()
        let (reply, before) = try client.reply(to: id)
        #expect(before.texts(sid) == ["Three."] && before.chunks(sid).last?["id"] == .string("chunk-3"))
        #expect(reply["data"]?["content"] == .string("One.\n\nTwo.\n\nThree."))
    }

    @Test func unknownSessionIDsAreAdopted() throws {
        let bed = CompanionTestbed()
        let adopted = "6a1e0000-0000-4000-8000-00000000000a"
        let body = try bed.startProject("app", .object(["continueSession": .bool(true), "sessionId": .string(adopted)]))
        #expect(body["session"]?["sessionId"] == .string(adopted))
        #expect(try bed.session("app") == adopted, "one session per directory")
        let again = try bed.startProject("app", .object(["continueSession": .bool(true), "sessionId": .string(adopted)]))
        #expect(again["session"]?["sessionId"] == .string(adopted) && again["continued"] == .bool(true))
        let plain = "6a1e0000-0000-4000-8000-00000000000b"
        #expect(try bed.startProject("lib", .object(["sessionId": .string(plain)]))["session"]?["sessionId"] == .string(plain))

        let restored = "6a1e0000-0000-4000-8000-00000000000c"
        let client = bed.connect()
        Self.checkTurn(try client.command("adopt me", session: restored, path: bed.path("tool")), session: restored, answer: "echo: adopt me")
        #expect(Set([adopted, plain, restored]).isSubset(of: try bed.sessionDetails().keys))
        Self.checkTurn(
            try client.command("in the adopted one", session: adopted, path: bed.path("app")),
            session: adopted,
            answer: "echo: in the adopted one"
        )
    }

    @Test func aFailingBackendAnswersWithAFailedClaudeResponse() throws {
        let bed = CompanionTestbed(backends: [ScriptedBackend(name: "cmd") { _ in [.failed("exit status 3")] }])
        let sid = try bed.session("app")
        let asker = bed.connect(device: "asker")
        let watcher = bed.connect(device: "watcher")
        try asker.subscribe(sid)
        try watcher.subscribe(sid)
        let turn = try asker.command("this will fail", session: sid, path: bed.path("app"))
        #expect(turn.reply["type"] == .string("claudeResponse"), "never an error frame for a claudeCommand")
        #expect(turn.reply["data"]?["success"] == .bool(false) && turn.reply["data"]?["content"] == .string(""))
        #expect(turn.reply["data"]?["error"] == .string("the assistant failed to answer: exit status 3"))
        #expect(asker.frames.filter { $0["requestId"]?.stringValue == turn.requestID }.count == 1, "one frame carries the requestId")
        #expect(turn.frames.of("error").isEmpty)
        let seen = watcher.read()
        #expect(seen.result(sid)?["data"]?["success"] == .bool(false) && seen.result(sid)?["requestId"] == .null)
        let error = try #require(seen.of("error").first)
        CompanionClient.checkError(error, "COMMAND_FAILED")
        #expect(error["requestId"] == .null && error["data"]?["sessionId"] == .string(sid))
    }

    @Test func aDirectoryOutsideTheRootFailsAsAClaudeResponse() throws {
        let bed = CompanionTestbed()
        let turn = try bed.connect().command("escape", session: "6a1e0000-0000-4000-8000-00000000000d", path: "/etc")
        #expect(turn.reply["type"] == .string("claudeResponse") && turn.reply["data"]?["success"] == .bool(false))
        #expect(turn.reply["data"]?["error"] == .string("/etc is not inside the relay's projects root"))
        #expect(turn.reply["data"]?["sessionId"] == .string("6a1e0000-0000-4000-8000-00000000000d"))
    }

    @Test func otherSocketsOfTheSessionSeeTheTurnAndTheUserMessage() throws {
        let bed = CompanionTestbed()
        let sid = try bed.session("app")
        let asker = bed.connect(device: "dev-a")
        let other = bed.connect(device: "dev-b")
        try asker.subscribe(sid)
        try other.subscribe(sid)
        let turn = try asker.command("from a", session: sid, path: bed.path("app"))
        Self.checkTurn(turn, session: sid, answer: "echo: from a")
        #expect(turn.frames.of("userMessage").isEmpty, "a device does not hear its own message")
        let seen = other.read()
        let users = seen.of("userMessage")
        #expect(users.count == 1, "one userMessage for the other device")
        let user = try #require(users.first?["data"])
        #expect(user["sessionId"] == .string(sid) && user["content"] == .string("from a") && user["deviceId"] == .string("companion:dev-a"))
        #expect(user["messageId"]?.stringValue?.isEmpty == false)
        let firstChunk = try #require(seen.firstIndex { $0["type"] == .string("streamChunk") })
        #expect(seen.firstIndex { $0["type"] == .string("userMessage") } ?? .max < firstChunk, "the user message comes before the answer")
        #expect(seen.texts(sid).joined(separator: "\n\n") == "echo: from a" && seen.result(sid, "echo: from a") != nil)
        #expect(seen.of("claudeResponse").isEmpty, "the reply goes only to the socket that asked")
    }

    @Test(arguments: ["claudeCommand", "ask"])
    func aSocketHoldsTheSessionsItAskedIn(_ how: String) throws {
        let bed = CompanionTestbed()
        let sid = try bed.session("app")
        let mine = bed.connect(device: "holder")  // never subscribes
        if how == "claudeCommand" {
            #expect(try mine.command("mine", session: sid, path: bed.path("app")).reply["data"]?["success"] == .bool(true))
        } else {
            let (reply, _) = try mine.request("ask", .object(["prompt": .string("mine"), "sessionId": .string(sid)]))
            #expect(reply["type"] == .string("askResponse") && reply["data"]?["success"] == .bool(true))
        }
        _ = mine.read()
        _ = try bed.connect(device: "other").command("yours", session: sid, path: bed.path("app"))
        let seen = mine.read()
        #expect(seen.result(sid, "echo: yours")?["_queued"] == nil)
        #expect(seen.of("userMessage").compactMap { $0["data"]?["content"]?.stringValue } == ["yours"])
    }

    @Test func everySocketOfTheAskingDeviceGetsTheClaudeResponse() throws {
        // All installs of the real app are one device (no x-device-id, the same user agent).
        let bed = CompanionTestbed()
        let sid = try bed.session("app")
        let first = bed.connect()
        let second = bed.connect()
        try first.subscribe(sid)
        try second.subscribe(sid)
        let turn = try first.command("to both", session: sid, path: bed.path("app"))
        Self.checkTurn(turn, session: sid, answer: "echo: to both")
        let (reply, _) = try second.reply(to: turn.requestID)
        #expect(reply["type"] == .string("claudeResponse") && reply["data"]?["content"] == .string("echo: to both"))
        #expect(second.read().of("streamChunk").isEmpty, "the claudeResponse comes after every chunk")
    }

    @Test func toolsShowAsToolUseAChunkWithTheToolsNameAndToolResult() throws {
        let backend = ScriptedBackend()
        let bed = CompanionTestbed(backends: [backend])
        let sid = try bed.session("app")
        let client = bed.connect()
        let id = client.send("claudeCommand", .object(["command": .string("go"), "sessionId": .string(sid)]))
        let run = try #require(backend.runs.first)
        let tool = ToolActivity(id: "t1", name: "Bash", label: "ls -la", inputJSON: #"{"command":"ls -la"}"#)
        run.emit(.progress("Looking"))
        run.emit(.toolStarted(tool))
        var ended = tool
        ended.success = false
        run.emit(.toolEnded(ended))
        run.emit(.final("Looking\n\nDone."))
        bed.bed.settle()
        let (_, before) = try client.reply(to: id)
        #expect(before.chunks(sid).compactMap { $0["type"]?.stringValue } == ["text", "tool_use", "text", "complete"])
        #expect(before.texts(sid) == ["Looking", "Done."], "the text before a tool is a finished paragraph")
        let chunk = try #require(before.chunks(sid).first { $0["type"] == .string("tool_use") })
        #expect(chunk["content"] == .string("ls -la") && chunk["metadata"] == .object(["toolName": .string("Bash"), "toolId": .string("t1")]))
        let use = try #require(before.of("toolUse").first?["data"])
        #expect(use["toolName"] == .string("Bash") && use["toolInput"] == .object(["command": .string("ls -la")]) && use["toolId"] == .string("t1"))
        #expect(before.of("toolResult").first?["data"]?["success"] == .bool(false))
    }
}
