import ClawlineWire
import Foundation
import RelayCore
import RelayTesting
import Testing

@testable import ClawlineBridge

/// Approvals in the Clawline app, which has no approval frame: the relay's note is an ordinary
/// assistant message of the timeline, and `/approve ID` sent as a message answers it, in memory.
@Suite struct ClawlineApprovalTests {
    typealias Bed = ClawlineTestbed

    /// The admin's socket, a turn streaming and waiting for an answer to `touch x`.
    struct Asking {
        let bed: Bed
        let backend: ScriptedBackend
        let device: Bed.Device
        let socket: TestSocket
        let approval: Approval
        /// What the socket received once the question was asked.
        let frames: [JSONValue]

        init() throws {
            backend = ScriptedBackend(name: "claude")
            bed = Bed(backends: [backend])
            let (admin, socket) = try bed.setupAdmin()
            device = admin
            self.socket = socket
            #expect(socket.exchange(Bed.message("make x", id: "c_make")).ackIDs == ["c_make"])
            backend.runs[0].emit(.progress("Let me create it."))
            let ask = ApprovalAsk(requestID: "req-1", agent: "Claude Code", toolName: "Bash", summary: "touch x", input: .object([:]))
            backend.runs[0].emit(.approval(ask))
            bed.bed.settle()
            approval = try #require(bed.hub.approvals.pending(userID: admin.userID).first)
            frames = socket.readJSON()
        }
    }

    /// Every frame decodes as the app's wire model does.
    static func decodes(_ frames: [JSONValue]) -> Bool {
        frames.allSatisfy { ServerFrame.decode(Array($0.encoded().utf8)) != nil }
    }

    @Test func theNoteIsAnAssistantMessageOfTheTimeline() throws {
        let asking = try Asking()
        let id = asking.approval.shortID
        let expected = "Claude Code wants to run Bash: `touch x`. Reply /approve \(id), /always \(id) or /deny \(id) (expires in 10 min)."
        let note = try #require(asking.frames.first { $0.isAssistantFinal })
        #expect(note["content"] == .string(expected) && note["channelType"] == .string("personal") && note["deviceId"] == nil)
        #expect(Self.decodes(asking.frames))
        let stream = try #require(asking.frames.first { $0.isStreamUpdate })
        #expect(stream["id"] != note["id"], "the note is not the running answer")
        // A device that connects later replays it with the timeline.
        let later = try asking.bed.connect(asking.device)
        #expect(later.after.filter(\.isAssistantFinal).compactMap { $0["content"]?.stringValue } == [expected])
    }

    @Test(arguments: [
        ("/approve", ApprovalAnswer.allow(always: false), "Approved once"), ("/always", .allow(always: true), "Always allowed for this session"),
        ("/deny", .deny(message: "Denied by Admin from clawline"), "Denied"),
    ])
    func aCommandSentAsAMessageAnswersIt(command: String, answer: ApprovalAnswer, reply: String) throws {
        let asking = try Asking()
        let id = asking.approval.shortID
        let sent = asking.socket.exchange(Bed.message("\(command) \(id)", id: "c_answer"))
        #expect(Self.decodes(sent))
        #expect(sent.ackIDs == ["c_answer"] && sent.echoes == ["\(command) \(id)"])
        #expect(asking.backend.runs.count == 1 && asking.backend.runs[0].answers.map(\.answer) == [answer], "answered by the relay, not a backend")
        #expect(sent.finals.contains("\(reply): Bash touch x (\(id))."))
        #expect(sent.finals.contains { $0.hasPrefix("Bash `touch x`: ") && $0.hasSuffix("(\(id)).") }, "the resolution is posted too")
        asking.backend.runs[0].emit(.final("Created x."))
        asking.bed.bed.settle()
        #expect(asking.socket.readJSON().finals == ["Created x."], "the run's answer is its own")
    }

    @Test func anUnknownIDIsAnsweredAsSuch() throws {
        let asking = try Asking()
        let sent = asking.socket.exchange(Bed.message("/approve zzzz", id: "c_wrong"))
        #expect(sent.finals == ["Could not approve: no pending approval zzzz."])
        #expect(asking.backend.runs[0].answers.isEmpty)
    }
}
