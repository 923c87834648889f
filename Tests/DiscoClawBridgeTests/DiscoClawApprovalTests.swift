import DiscoClawWire
import Foundation
import RelayCore
import RelayTesting
import Testing

@testable import DiscoClawBridge

/// Approvals in the DiscoClaw app, which has no approval UI: the relay's notes arrive through the
/// app's own sync, and `/approve ID` posted as a message answers them, in memory.
@Suite struct DiscoClawApprovalTests {
    /// A phone with a socket, a conversation whose turn waits for an answer to `touch x`.
    struct Asking {
        let bed: DiscoClawTestbed
        let backend: ScriptedBackend
        let phone: AppDevice
        let socket: TestSocket
        let conversationID: String
        let approval: Approval
        let cursor: Int64

        init() throws {
            backend = ScriptedBackend(name: "claude")
            bed = DiscoClawTestbed(backends: [backend])
            phone = try bed.register(name: "Ann's iPhone")
            socket = phone.socket()
            conversationID = try phone.createConversation()
            _ = try phone.post("make x", in: conversationID)
            bed.afterHold()
            cursor = try #require(phone.sync()["cursor"]?.intValue)
            _ = socket.readJSON()
            let ask = ApprovalAsk(requestID: "req-1", agent: "Claude Code", toolName: "Bash", summary: "touch x", input: .object([:]))
            backend.runs[0].emit(.approval(ask))
            bed.bed.settle()
            approval = try #require(bed.bed.hub.approvals.pending(userID: phone.userID).first)
        }

        /// The assistant rows `/sync` returns after `since`, their contents.
        func notes(since: Int64) throws -> [String] {
            let rows = try phone.sync(since: since)["messages"]?.arrayValue ?? []
            return rows.filter { $0["role"] == .string("assistant") && $0["status"] == .string("complete") }.compactMap { $0["content"]?.stringValue }
        }
    }

    @Test func theNoteArrivesThroughTheAppsSync() throws {
        let asking = try Asking()
        let frames = asking.socket.readJSON()
        #expect(frames == [.object(["type": .string("conversation.updated"), "conversationId": .string(asking.conversationID)])])
        let id = asking.approval.shortID
        let expected = "Claude Code wants to run Bash: `touch x`. Reply /approve \(id), /always \(id) or /deny \(id) (expires in 10 min)."
        #expect(try asking.notes(since: asking.cursor) == [expected])
        let row = try #require(asking.phone.sync(since: asking.cursor)["messages"]?.arrayValue?.first)
        #expect(row["conversationId"] == .string(asking.conversationID) && row["createdAt"]?.intValue != nil && row["seq"]?.intValue != nil)
    }

    @Test(arguments: [
        ("/approve", ApprovalAnswer.allow(always: false), "Approved once", "allowed once by Ann's iPhone from discoclaw"),
        ("/always", .allow(always: true), "Always allowed for this session", "always allowed (for this session) by Ann's iPhone from discoclaw"),
        ("/deny", .deny(message: "Denied by Ann's iPhone from discoclaw"), "Denied", "denied by Ann's iPhone from discoclaw"),
    ])
    func aCommandPostedAsAMessageAnswersIt(command: String, answer: ApprovalAnswer, reply: String, resolved: String) throws {
        let asking = try Asking()
        _ = asking.socket.readJSON()
        let sent = try asking.phone.post("\(command) \(asking.approval.shortID)", in: asking.conversationID)
        let answerID = try #require(sent["assistantMessageId"]?.stringValue)
        asking.bed.afterHold()
        #expect(asking.backend.runs.count == 1, "no backend sees the command")
        #expect(asking.backend.runs[0].answers.map(\.answer) == [answer])
        let frames = asking.socket.readJSON()
        let complete = try #require(frames.of("message.complete", answerID).first)
        #expect(complete["content"] == .string("\(reply): Bash touch x (\(asking.approval.shortID))."))
        #expect(frames.of("conversation.updated").count >= 1, "the resolution's note is announced")
        #expect(try asking.notes(since: asking.cursor).contains("Bash `touch x`: \(resolved) (\(asking.approval.shortID))."))
        asking.backend.runs[0].emit(.final("made x"))
        asking.bed.bed.settle()
        #expect(asking.socket.readJSON().of("message.complete").map { $0["content"] } == [.string("made x")], "the run's answer is its own")
    }

    @Test func toolEndCarriesTheToolsOutput() throws {
        let asking = try Asking()
        let turn = asking.backend.runs[0]
        turn.emit(.toolEnded(ToolActivity(id: "t1", name: "Bash", success: true, result: "total 0\n")))
        turn.emit(.toolEnded(ToolActivity(id: "t2", name: "Read", success: true, result: String(repeating: "x", count: 20_000))))
        asking.bed.bed.settle()
        let ends = asking.socket.readJSON().of("tool.end")
        #expect(ends.first?["result"] == .string("total 0\n") && ends.first?["tool"] == .string("Bash"))
        #expect((ends.last?["result"]?.stringValue?.utf8.count ?? .max) <= ToolActivity.resultLimit)
        #expect(
            DiscoClawEvent.decode(Array(#"{"type":"tool.end","messageId":"m","tool":"Bash","result":"ok"}"#.utf8))
                == .toolEnd(.init(messageId: "m", tool: "Bash", result: "ok"))
        )
    }
}
