import ClawlineWire
import Foundation
import RelayCore
import RelayTesting
import Testing

@testable import ClawlineBridge

/// Chat over the listener in memory: acks and echoes, who sees what, idempotent retries, the
/// message rules, the queue, rate limits, typing, failures.
@Suite struct ClawlineChatTests {
    typealias Bed = ClawlineTestbed

    func settings(_ change: (inout ClawlineSettings) -> Void) -> ClawlineSettings {
        var settings = ClawlineSettings()
        change(&settings)
        return settings
    }

    /// A testbed whose backend answers only when the test says so.
    func scripted(_ change: (inout ClawlineSettings) -> Void = { _ in }) -> (Bed, ScriptedBackend) {
        let backend = ScriptedBackend(name: "slow")
        return (Bed(settings: settings(change), backends: [backend]), backend)
    }

    @Test func serverIDsAreUniqueAndEchoAndAnswerReachEveryDeviceOfTheUserOnly() throws {
        let bed = Bed()
        let (admin, adminSocket) = try bed.setupAdmin()
        let sibling = try bed.pairAndApprove(via: adminSocket, userID: admin.userID, name: "Sibling")
        let stranger = try bed.pairAndApprove(via: adminSocket, name: "Stranger")
        let siblingSocket = try bed.connect(sibling).socket
        let strangerSocket = try bed.connect(stranger).socket

        let sent = siblingSocket.exchange(Bed.message("from the sibling", id: "c_s"))
        #expect(sent.ackIDs == ["c_s"] && sent.echoes == ["from the sibling"] && sent.finals == ["echo: from the sibling"])
        let echo = try #require(sent.first { $0.isUserEcho })
        #expect(echo["deviceId"]?.stringValue == sibling.deviceID)
        let seen = adminSocket.readJSON()
        #expect(seen.ackIDs.isEmpty, "acks go to the sender only")
        #expect(seen.first { $0.isUserEcho } == echo && seen.finals == ["echo: from the sibling"])
        #expect(strangerSocket.readJSON().isEmpty, "another user sees nothing of it")

        var ids = Set<String>()
        for text in ["one", "two", "three"] {
            for frame in adminSocket.exchange(Bed.message(text)) where frame.type == "message" && frame["streaming"] == .bool(false) {
                let inserted = ids.insert(frame["id"]?.stringValue ?? "").inserted
                #expect(inserted)
            }
        }
        #expect(ids.count == 6)
    }

    @Test func anIdempotentRetryIsAckedAgainWithoutASecondEchoOrAnswer() throws {
        let bed = Bed()
        let (_, socket) = try bed.setupAdmin()
        #expect(socket.exchange(Bed.message("retry me", id: "c_r")).echoes == ["retry me"])
        #expect(socket.exchange(Bed.message("retry me", id: "c_r")) == [.object(["type": .string("ack"), "id": .string("c_r")])])
        #expect(socket.exchange(Bed.message("retry me", id: "c_r", attachments: [])).ackIDs == ["c_r"], "no attachments is an empty list")
        let changed = socket.exchange(Bed.message("changed", id: "c_r"))
        #expect(changed.errorCodes == ["invalid_message"] && changed.first?["messageId"]?.stringValue == "c_r" && changed.echoes.isEmpty)
        socket.expectOpen()
    }

    @Test func aRetryWhileStreamingStartsNoSecondGeneration() throws {
        let (bed, backend) = scripted()
        let (_, socket) = try bed.setupAdmin()
        _ = socket.exchange(Bed.message("slow", id: "c_1"))
        backend.runs[0].emit(.progress("sl"))
        bed.bed.settle()
        #expect(socket.readJSON().filter(\.isStreamUpdate).count == 1)
        #expect(socket.exchange(Bed.message("slow", id: "c_1")).ackIDs == ["c_1"])
        backend.runs[0].emit(.final("echo: slow"))
        bed.bed.settle()
        #expect(socket.readJSON().finals == ["echo: slow"])
        #expect(backend.runs.count == 1)
    }

    @Test func clientIDsAreScopedPerDevice() throws {
        let bed = Bed()
        let (admin, adminSocket) = try bed.setupAdmin()
        let sibling = try bed.pairAndApprove(via: adminSocket, userID: admin.userID)
        let siblingSocket = try bed.connect(sibling).socket
        let first = adminSocket.exchange(Bed.message("from admin", id: "c_shared"))
        _ = siblingSocket.readJSON()
        let second = siblingSocket.exchange(Bed.message("from sibling", id: "c_shared"))
        #expect(first.ackIDs == ["c_shared"] && second.ackIDs == ["c_shared"])
        #expect(first.first { $0.isUserEcho }?["id"] != second.first { $0.isUserEcho }?["id"])
    }

    @Test func invalidIDsContentAndTypesAreInvalidButOpen() throws {
        let bed = Bed()
        let (_, socket) = try bed.setupAdmin()
        let ids: [JSONValue?] = [.string("s_123"), .string("x_123"), .string("123"), .string(""), .null, .int(42), nil]
        let contents: [JSONValue?] = [.string(""), .null, .int(42), nil]
        var frames: [JSONValue] = ids.map { .object(["type": .string("message"), "id": $0 ?? .null, "content": .string("hi")]) }
        frames[6] = .object(["type": .string("message"), "content": .string("hi")])
        frames += contents.map { content in
            var fields: [String: JSONValue] = ["type": .string("message"), "id": .string(Bed.newClientID())]
            fields["content"] = content
            return .object(fields)
        }
        frames += [
            .object(["type": .string("no_such_type")]), .object(["type": .string("cancel"), "id": .string("c_1")]),
            .object(["id": .string("c_1"), "content": .string("no type")]), .object(["type": .int(7)]), .array([.int(1), .int(2), .int(3)]),
        ]
        for frame in frames {
            #expect(socket.exchange(frame).errorCodes == ["invalid_message"], "\(frame)")
        }
        socket.expectOpen()
        #expect(bed.journal.records.isEmpty)
    }

    @Test(arguments: [false, true], ["{not json", #"{"type": "message", "id": "c_1""#, "\u{FF}\u{FE}"])
    func malformedJSONClosesWith1002AndNoError(_ authenticated: Bool, _ text: String) throws {
        let bed = Bed()
        let socket = authenticated ? try bed.setupAdmin().1 : bed.harness.connect()
        socket.send(text)
        #expect(socket.readJSON().errorCodes.isEmpty)
        socket.expectClosed(1002)
    }

    @Test func theContentLimitIs64KBOfUTF8() throws {
        let bed = Bed()
        let (_, socket) = try bed.setupAdmin()
        let cases: [(String, String)] = [
            (String(repeating: "a", count: 65_536), "ack"), (String(repeating: "é", count: 32_768), "ack"),
            (String(repeating: "a", count: 65_537), "payload_too_large"), (String(repeating: "é", count: 32_768) + "a", "payload_too_large"),
        ]
        for (content, expected) in cases {
            let id = Bed.newClientID()
            let frames = socket.exchange(Bed.message(content, id: id))
            if expected == "ack" {
                #expect(frames.ackIDs == [id], "\(content.utf8.count) bytes")
            } else {
                #expect(frames.errorCodes == [expected] && frames.first?["messageId"]?.stringValue == id, "\(content.utf8.count) bytes")
            }
        }
        socket.expectOpen()
    }

    @Test func aThirdOversizedMessageWithinAMinuteCloses() throws {
        let bed = Bed()
        let (_, socket) = try bed.setupAdmin()
        let big = String(repeating: "a", count: 65_537)
        for _ in 0..<2 { #expect(socket.exchange(Bed.message(big)).errorCodes == ["payload_too_large"]) }
        #expect(socket.exchange(Bed.message(big)).errorCodes == ["payload_too_large"])
        socket.expectClosed(1008)
    }

    @Test func twentyMessagesQueueBehindTheActiveOneAndTheNextIsRateLimited() throws {
        let (bed, _) = scripted {
            $0.messagesPerSecond = 1000
            $0.maxQueuedMessages = 20
        }
        let (_, socket) = try bed.setupAdmin()
        let active = socket.exchange(Bed.message("active"))
        #expect(active.ofType("typing").first?["active"] == .bool(true), "now generating")
        let ids = (0..<21).map { _ in Bed.newClientID() }
        var frames: [JSONValue] = []
        for (index, id) in ids.enumerated() { frames += socket.exchange(Bed.message("queued \(index)", id: id)) }
        #expect(frames.ackIDs == Array(ids.prefix(20)))
        #expect(frames.errorCodes == ["rate_limited"] && frames.ofType("error").first?["messageId"]?.stringValue == ids[20])
        socket.expectOpen()
    }

    @Test func fromIdleTheActiveTurnAndTwentyQueuedOnesAreAcked() throws {
        let (bed, _) = scripted { $0.messagesPerSecond = 1000 }
        let (_, socket) = try bed.setupAdmin()
        var frames: [JSONValue] = []
        for index in 0..<22 { frames += socket.exchange(Bed.message("burst \(index)")) }
        #expect(frames.ackIDs.count == 21 && frames.errorCodes == ["rate_limited"])
    }

    @Test func theQueueIsFIFOWithOneStreamAtATime() throws {
        let (bed, backend) = scripted { $0.messagesPerSecond = 100 }
        let (_, socket) = try bed.setupAdmin()
        let texts = ["m0", "m1", "m2", "m3"]
        for text in texts { _ = socket.exchange(Bed.message(text)) }
        var streams: [String] = []
        for (index, text) in texts.enumerated() {
            #expect(backend.runs.count == index + 1, "one stream at a time")
            #expect(backend.runs[index].request.text == text)
            backend.runs[index].emit(.progress("echo"))
            backend.runs[index].emit(.final("echo: \(text)"))
            bed.bed.settle()
            let frames = socket.readJSON()
            #expect(frames.finals == ["echo: \(text)"])
            streams += frames.filter { $0.type == "message" && $0["role"]?.stringValue == "assistant" }.compactMap { $0["id"]?.stringValue }
        }
        #expect(Set(streams).count == 4 && streams.count == 8, "two frames per stream, never interleaved: \(streams)")
    }

    @Test func fiveMessagesASecondThenRateLimitedButOpen() throws {
        let bed = Bed()
        let (_, socket) = try bed.setupAdmin()
        let ids = (0..<7).map { _ in Bed.newClientID() }
        var frames: [JSONValue] = []
        for (index, id) in ids.enumerated() { frames += socket.exchange(Bed.message("burst \(index)", id: id)) }
        #expect(frames.ackIDs == Array(ids.prefix(5)))
        #expect(frames.errorCodes == ["rate_limited", "rate_limited"])
        #expect(frames.ofType("error").compactMap { $0["messageId"]?.stringValue } == Array(ids.suffix(2)))
        bed.advance(seconds: 1)
        #expect(socket.exchange(Bed.message("after the window")).finals == ["echo: after the window"])
    }

    @Test func userTypingIsTakenSilentlyLimitedAndNeverRelayed() throws {
        let bed = Bed()
        let (admin, adminSocket) = try bed.setupAdmin()
        let sibling = try bed.pairAndApprove(via: adminSocket, userID: admin.userID)
        let siblingSocket = try bed.connect(sibling).socket
        for active in [true, false] {
            #expect(siblingSocket.exchange(.object(["type": .string("typing"), "active": .bool(active)])).isEmpty)
        }
        #expect(adminSocket.readJSON().isEmpty, "user typing is not relayed")
        #expect(siblingSocket.exchange(.object(["type": .string("typing"), "active": .bool(true)])).errorCodes == ["rate_limited"])
        siblingSocket.expectOpen()
        let invalid: [JSONValue] = [
            .object(["type": .string("typing"), "active": .bool(true), "role": .string("assistant")]),
            .object(["type": .string("typing"), "active": .bool(true), "role": .string("user")]),
            .object(["type": .string("typing")]), .object(["type": .string("typing"), "active": .string("yes")]),
        ]
        for frame in invalid { #expect(adminSocket.exchange(frame).errorCodes == ["invalid_message"], "\(frame)") }
        adminSocket.expectOpen()
    }

    @Test func typingClearsByItselfAfterTheTimeoutAndATrueResetsIt() throws {
        let bed = Bed(settings: settings { $0.typingTimeoutSeconds = 10 })
        let (_, socket) = try bed.setupAdmin()
        let typing = { (active: Bool) in _ = socket.exchange(.object(["type": .string("typing"), "active": .bool(active)])) }
        typing(true)
        #expect(bed.bed.hub.counters.typingDevices["clawline", default: 0] == 1)
        bed.advance(seconds: 7)
        typing(true)
        bed.advance(seconds: 9)
        #expect(bed.bed.hub.counters.typingDevices["clawline", default: 0] == 1, "the second true restarted the 10 s")
        bed.advance(seconds: 1)
        #expect(bed.bed.hub.counters.typingDevices["clawline", default: 0] == 0)
        typing(true)
        #expect(bed.bed.hub.counters.typingDevices["clawline", default: 0] == 1)
        bed.advance(seconds: 1)
        typing(false)
        #expect(bed.bed.hub.counters.typingDevices["clawline", default: 0] == 0, "false clears at once")
    }

    @Test func aFailedAnswerIsServerErrorForItsMessageAndTheQueueGoesOn() throws {
        let (bed, backend) = scripted()
        let (_, socket) = try bed.setupAdmin()
        _ = socket.exchange(Bed.message("will fail", id: "c_1"))
        _ = socket.exchange(Bed.message("will fail too", id: "c_2"))
        backend.runs[0].emit(.failed("exit 3"))
        bed.bed.settle()
        var frames = socket.readJSON()
        #expect(frames.ofType("error").map { $0["messageId"]?.stringValue } == ["c_1"] && frames.errorCodes == ["server_error"])
        backend.runs[1].emit(.failed("exit 3"))
        bed.bed.settle()
        frames += socket.readJSON()
        #expect(frames.ofType("error").map { $0["messageId"]?.stringValue } == ["c_1", "c_2"] && frames.finals.isEmpty)
        socket.expectOpen()
        #expect(socket.exchange(Bed.message("will fail", id: "c_1")).errorCodes == ["invalid_message"], "a failed id cannot be restarted")
    }

    @Test func anInactiveStreamFailsAndItsIDCannotBeRetried() throws {
        let (bed, _) = scripted { $0.streamInactivitySeconds = 1 }
        let (_, socket) = try bed.setupAdmin()
        #expect(socket.exchange(Bed.message("stalled", id: "c_1")).ackIDs == ["c_1"])
        #expect(socket.exchange(Bed.message("stalled", id: "c_1")).ackIDs == ["c_1"], "a retry while it runs")
        bed.advance(seconds: 1)
        let failed = socket.readJSON()
        #expect(failed.errorCodes == ["server_error"] && failed.ofType("error").first?["messageId"]?.stringValue == "c_1")
        #expect(socket.exchange(Bed.message("stalled", id: "c_1")).errorCodes == ["invalid_message"])
        socket.expectOpen()
    }
}
