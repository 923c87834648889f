import ClawlineWire
import Foundation
import RelayCore
import RelayTesting
import Testing

@testable import ClawlineBridge

/// A device's sockets over the listener in memory: a newer socket replaces the old one and takes
/// its stream over; a stream dies with its device's last socket (v1's `cancel_on_disconnect`)
/// unless the listener says otherwise.
@Suite struct ClawlineTakeoverTests {
    typealias Bed = ClawlineTestbed

    func scripted(cancelOnDisconnect: Bool = true) -> (Bed, ScriptedBackend) {
        let backend = ScriptedBackend(name: "slow")
        var settings = ClawlineSettings()
        settings.cancelOnDisconnect = cancelOnDisconnect
        return (Bed(settings: settings, backends: [backend]), backend)
    }

    func emit(_ bed: Bed, _ run: ScriptedBackend.Run, _ events: TurnEvent...) {
        for event in events { run.emit(event) }
        bed.bed.settle()
    }

    @Test func aNewSocketReplacesTheOldWithSessionReplacedAnd1000() throws {
        let bed = Bed()
        let (admin, old) = try bed.setupAdmin()
        let new = try bed.connect(admin)
        let frames = old.readJSON()
        #expect(frames.last?.type == "error" && frames.errorCodes == ["session_replaced"] && frames.last?["message"]?.stringValue != nil)
        old.expectClosed(1000)
        #expect(new.socket.exchange(Bed.message("still works")).finals == ["echo: still works"])
    }

    @Test func aTakeoverMovesTheRunningStreamToTheNewSocket() throws {
        let (bed, backend) = scripted()
        let (admin, old) = try bed.setupAdmin()
        let echo = try #require(old.exchange(Bed.message("hand me over")).first { $0.isUserEcho })
        emit(bed, backend.runs[0], .progress("echo: hand"))
        let first = try #require(old.readJSON().first { $0.isStreamUpdate })

        let new = try bed.connect(admin, cursor: echo["id"])
        #expect(new.result["replayCount"] == .int(0))
        let oldFrames = old.readJSON()
        #expect(oldFrames.errorCodes == ["session_replaced"] && oldFrames.finals.isEmpty)
        old.expectClosed(1000)
        let snapshot = try #require(new.after.first { $0.type == "message" })
        #expect(new.after.prefix { $0.type != "message" }.allSatisfy { $0.type == "typing" })
        #expect(snapshot.isStreamUpdate && snapshot["id"] == first["id"] && snapshot["content"] == first["content"])
        #expect(!backend.runs[0].isCancelled, "the turn goes on")
        emit(bed, backend.runs[0], .progress("echo: hand me"), .final("echo: hand me over"))
        let rest = new.socket.readJSON()
        #expect(rest.finals == ["echo: hand me over"] && rest.first { $0.isAssistantFinal }?["id"] == first["id"])
        #expect(rest.filter { $0.type == "message" }.allSatisfy { $0["id"] == first["id"] })
    }

    @Test func theQueueSurvivesATakeoverAndSiblingsStay() throws {
        let (bed, backend) = scripted()
        let (admin, old) = try bed.setupAdmin()
        let sibling = try bed.pairAndApprove(via: old, userID: admin.userID)
        let siblingSocket = try bed.connect(sibling).socket
        _ = old.exchange(Bed.message("first"))
        #expect(old.exchange(Bed.message("second", id: "c_2")).ackIDs == ["c_2"])
        let new = try bed.connect(admin).socket
        old.expectClosed(1000)
        emit(bed, backend.runs[0], .final("echo: first"))
        emit(bed, backend.runs[1], .final("echo: second"))
        #expect(new.readJSON().finals == ["echo: first", "echo: second"])
        #expect(siblingSocket.readJSON().finals == ["echo: first", "echo: second"])
        let echo = try #require(new.exchange(Bed.message("after takeover")).first { $0.isUserEcho })
        #expect(siblingSocket.readJSON().first { $0["id"] == echo["id"] }?["deviceId"]?.stringValue == admin.deviceID)
        siblingSocket.expectOpen()
    }

    @Test func aStreamDiesWithItsSocketAndIsNotResumed() throws {
        let (bed, backend) = scripted()
        let (admin, socket) = try bed.setupAdmin()
        let echo = try #require(socket.exchange(Bed.message("cut off", id: "c_1")).first { $0.isUserEcho })
        emit(bed, backend.runs[0], .progress("echo: cut"))
        socket.close()
        #expect(backend.runs[0].isCancelled)
        let again = try bed.connect(admin, cursor: echo["id"])
        #expect(again.result["replayCount"] == .int(0), "no final exists")
        let retry = again.socket.exchange(Bed.message("cut off", id: "c_1"))
        #expect(retry.errorCodes == ["invalid_message"] && !retry.contains { $0.isStreamUpdate }, "a new id is needed")
        #expect(backend.runs.count == 1)
        _ = again.socket.exchange(Bed.message("new id works"))
        emit(bed, backend.runs[1], .final("echo: new id works"))
        #expect(again.socket.readJSON().finals == ["echo: new id works"])
    }

    @Test func theQueueIsDroppedWithTheLastSocketAndARetryRegenerates() throws {
        let (bed, backend) = scripted()
        let (admin, socket) = try bed.setupAdmin()
        _ = socket.exchange(Bed.message("active one"))
        #expect(socket.exchange(Bed.message("queued one", id: "c_q")).ackIDs == ["c_q"])
        emit(bed, backend.runs[0], .progress("echo: act"))
        socket.close()
        let again = try bed.connect(admin).socket
        let retried = again.exchange(Bed.message("queued one", id: "c_q"))
        #expect(retried.ackIDs == ["c_q"] && retried.errorCodes.isEmpty, "acked before, never answered: it runs again")
        #expect(backend.runs.count == 2 && backend.runs[1].request.text == "queued one")
        emit(bed, backend.runs[1], .final("echo: queued one"))
        let frames = again.readJSON()
        #expect(frames.finals == ["echo: queued one"] && frames.echoes.isEmpty, "a retry is not echoed again")
    }

    @Test func aStreamCutByItsSocketTurnsTypingOffOnSiblings() throws {
        let (bed, backend) = scripted()
        let (admin, socket) = try bed.setupAdmin()
        let sibling = try bed.pairAndApprove(via: socket, userID: admin.userID)
        let siblingSocket = try bed.connect(sibling).socket
        _ = socket.exchange(Bed.message("cut me off"))
        #expect(siblingSocket.readJSON().ofType("typing").map { $0["active"] } == [.bool(true)])
        socket.close()
        let frames = siblingSocket.readJSON()
        #expect(
            frames == [
                .object(["type": .string("typing"), "role": .string("assistant"), "active": .bool(false), "channelType": .string("personal")])
            ]
        )
        emit(bed, backend.runs[0], .final("too late"))
        #expect(siblingSocket.readJSON().finals.isEmpty)
    }

    @Test func withoutCancelOnDisconnectTheAnswerCompletesAndIsReplayed() throws {
        let (bed, backend) = scripted(cancelOnDisconnect: false)
        let (admin, socket) = try bed.setupAdmin()
        let echo = try #require(socket.exchange(Bed.message("finish without me", id: "c_1")).first { $0.isUserEcho })
        emit(bed, backend.runs[0], .progress("echo: finish"))
        socket.close()
        #expect(!backend.runs[0].isCancelled)
        emit(bed, backend.runs[0], .final("echo: finish without me"))
        let again = try bed.connect(admin, cursor: echo["id"])
        #expect(again.result["replayCount"] == .int(1) && again.after.finals == ["echo: finish without me"])
        #expect(again.socket.exchange(Bed.message("finish without me", id: "c_1")) == [.object(["type": .string("ack"), "id": .string("c_1")])])
    }
}
