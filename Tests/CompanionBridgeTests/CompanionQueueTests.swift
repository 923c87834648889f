import CompanionWire
import Foundation
import RelayCore
import RelayTesting
import Testing

@testable import CompanionBridge

/// Delivery to devices away from the app, in memory: the durable queue, held sessions, presence.
@Suite struct CompanionQueueTests {
    static let sessionTypes: Set = ["streamChunk", "assistantMessage", "conversationResult", "claudeResponse", "userMessage", "error"]

    /// A backend the test answers, the app's session on `app`, a foreground observer holding it,
    /// and the device's socket holding it too.
    final class World {
        let backend = ScriptedBackend()
        let bed: CompanionTestbed
        let sid: String
        let observer: CompanionClient
        var client: CompanionClient

        init(settings: CompanionSettings = CompanionSettings(), device: String? = "phone") throws {
            bed = CompanionTestbed(settings: settings, backends: [backend])
            sid = try bed.session("app")
            observer = bed.connect(device: "observer")
            try observer.subscribe(sid)
            client = bed.connect(device: device)
            try client.subscribe(sid)
        }

        /// The device sends a command; returns its request id.
        func command(_ text: String = "queued answer", from client: CompanionClient? = nil) -> String? {
            (client ?? self.client).send(
                "claudeCommand",
                .object(["command": .string(text), "projectPath": .string(bed.path("app")), "sessionId": .string(sid)])
            )
        }

        /// The newest turn is answered.
        func answer(_ text: String = "echo: queued answer") throws {
            try #require(backend.runs.last).emit(.final(text))
            bed.bed.settle()
        }
    }

    /// Every missed event marked `_queued`, in its original order, once; the queued answer is the
    /// command's `claudeResponse`, after every chunk.
    static func checkQueued(_ frames: [JSONValue], requestID: String?, session: String, answer: String = "echo: queued answer") {
        let events = frames.filter { sessionTypes.contains($0["type"]?.stringValue ?? "") }
        #expect(!events.isEmpty && events.allSatisfy { $0["_queued"] == .bool(true) }, "every missed event comes marked _queued: \(events)")
        let replies = frames.filter { $0["requestId"]?.stringValue == requestID }
        #expect(replies.count == 1 && replies.first?["type"] == .string("claudeResponse"), "the queued answer is a claudeResponse")
        #expect(replies.first?["data"]?["content"] == .string(answer) && replies.first?["data"]?["sessionId"] == .string(session))
        #expect(events.result(session, answer) != nil, "the turn's conversationResult is queued")
        let at = events.firstIndex { $0["type"] == .string("claudeResponse") } ?? 0
        #expect(Array(events[at...]).of("streamChunk").isEmpty, "chunks come before the claudeResponse")
        let originals = events.compactMap { $0["_originalTimestamp"]?.stringValue }
        #expect(originals == originals.sorted(), "queued events come in their original order")
        #expect(Set(events.map { $0.encoded() }).count == events.count, "each queued event comes once")
    }

    @Test(arguments: ["next frame", "sessionForegrounded", "sessions/continue"])
    func aBackgroundedDeviceGetsItsAnswerQueuedWhenItComesBack(_ back: String) throws {
        let world = try World()
        let id = world.command()
        world.client.background(world.sid)
        _ = world.client.read()
        try world.answer()
        #expect(world.observer.read().result(world.sid, "echo: queued answer") != nil)
        #expect(world.client.read().isEmpty, "nothing is delivered live while backgrounded")
        switch back {
        case "next frame": world.client.send("ping")  // any frame brings the device back, holding the session
        case "sessionForegrounded": world.client.send("sessionForegrounded", .object(["sessionId": .string(world.sid)]))
        default:
            let body: JSONValue = .object(["sessionId": .string(world.sid), "workingDirectory": .string(world.bed.path("app"))])
            _ = try world.bed.restJSON("POST", "/api/sessions/continue", json: body, device: "phone")
        }
        Self.checkQueued(world.client.read(), requestID: id, session: world.sid)
        let (_, again) = try world.client.subscribe(world.sid)
        let redelivered = again.filter { Self.sessionTypes.contains($0["type"]?.stringValue ?? "") }
        #expect(redelivered.isEmpty, "a second subscribe delivers nothing")
        #expect(world.bed.bed.journal.queue(of: "companion:phone").isEmpty)
    }

    @Test(arguments: ["phone", nil] as [String?])
    func aDeviceWhoseSocketClosedGetsTheQueueOnReconnect(_ device: String?) throws {
        let world = try World(device: device)
        let id = world.command()
        world.client.socket.close()
        try world.answer()
        #expect(world.observer.read().result(world.sid) != nil)
        let again = world.bed.connect(device: device)  // within 30 s the queued events follow welcome, with no subscribe
        let frames = again.read()
        Self.checkQueued(frames, requestID: id, session: world.sid)
        let (_, more) = try again.subscribe(world.sid)  // what the app then sends
        #expect(more.isEmpty && again.read().isEmpty, "delivered once")
    }

    @Test(arguments: ["subscribe", "streamStart"])
    func streamCloseLetsTheSessionGoAndItsEventsWait(_ takeBack: String) throws {
        let world = try World()
        world.client.send("streamClose", .object(["sessionId": .string(world.sid), "reason": .string("user_requested")]))
        #expect(world.client.read().isEmpty, "no reply to streamClose")
        let id = world.command("after close", from: world.observer)
        try world.answer("echo: after close")
        #expect(world.observer.read().first { $0["requestId"]?.stringValue == id }?["data"]?["success"] == .bool(true))
        #expect(world.client.read().isEmpty, "a released session is not live")
        let (reply, before) =
            takeBack == "subscribe"
            ? try world.client.subscribe(world.sid) : try world.client.request("streamStart", .object(["sessionId": .string(world.sid)]))
        #expect(before.isEmpty, "the reply first, then the queued events")
        if takeBack == "streamStart" { #expect(reply["type"] == .string("streamStarted") && reply["data"]?["sessionId"] == .string(world.sid)) }
        let queued = world.client.read()
        #expect(queued.result(world.sid, "echo: after close") != nil && queued.allSatisfy { $0["_queued"] == .bool(true) })
        #expect(queued.of("claudeResponse").isEmpty, "another device's reply is not this device's")
        #expect(queued.of("userMessage").compactMap { $0["data"]?["content"]?.stringValue } == ["after close"])
    }

    @Test func aDeviceReconnectingWithinThirtySecondsHoldsItsSessions() throws {
        let world = try World()
        world.client.socket.close()
        world.bed.bed.advance(millis: 29_000)
        let again = world.bed.connect(device: "phone")
        _ = world.command("live again", from: world.observer)
        try world.answer("echo: live again")
        let result = try #require(again.read().result(world.sid, "echo: live again"))
        #expect(result["_queued"] == nil, "the session is live on the new socket without a subscribe")
    }

    @Test func aDeviceReconnectingLaterStartsWithNoSessions() throws {
        let world = try World()
        world.client.socket.close()
        world.bed.bed.advance(millis: 31_000)
        let again = world.bed.connect(device: "phone")
        _ = world.command("not live", from: world.observer)
        try world.answer("echo: not live")
        #expect(again.read().isEmpty, "past the grace the socket holds nothing: the events wait in the queue")
        #expect(!world.bed.bed.journal.queue(of: "companion:phone").isEmpty)
    }

    @Test func theOldestQueuedEventsAreDroppedFirst() throws {
        var settings = CompanionSettings()
        settings.maxQueuedEvents = 3
        let world = try World(settings: settings)
        world.client.background(world.sid)
        for text in ["first", "second", "third"] {
            _ = world.command(text, from: world.observer)
            try world.answer("echo: \(text)")
            world.bed.bed.advance(millis: 100)
        }
        #expect(world.client.read().isEmpty)
        let (_, before) = try world.client.subscribe(world.sid)
        #expect(before.isEmpty)
        let queued = world.client.read().filter { $0["_queued"] != nil }
        #expect(queued.result(world.sid, "echo: third") != nil)
        #expect(!queued.contains { $0.encoded().contains("first") }, "the oldest turn was dropped")
        #expect(!queued.of("userMessage").contains { $0["data"]?["content"] == .string("second") })
        #expect(Set(queued.map { $0.encoded() }).count == queued.count, "each queued event comes once")
    }

    @Test func queuedEventsExpireAfterTheQueueTTL() throws {
        var settings = CompanionSettings()
        settings.queueTTLSeconds = 1
        let world = try World(settings: settings)
        world.client.background(world.sid)
        _ = world.command("soon stale", from: world.observer)
        try world.answer("echo: soon stale")
        world.bed.bed.advance(millis: 2_000)
        #expect(world.client.read().isEmpty)
        _ = try world.client.subscribe(world.sid)
        #expect(!world.client.frames.contains { $0["_queued"] != nil }, "expired events are not delivered")
    }

    @Test func presenceFollowsTheDevice() throws {
        let bed = CompanionTestbed()
        let sid = try bed.session("app")
        let client = bed.connect(device: "presence-dev")
        let device = CompanionTestbed.deviceID("presence-dev")
        let presence = { bed.bed.hub.presence.state(of: device) }
        #expect(presence() == .foreground)
        #expect(bed.bed.journal.devices[device]?.userID == "companion", "every Companion client acts as [companion] user_id")
        client.background()
        #expect(presence() == .background)
        client.send("ping")
        #expect(presence() == .foreground)
        client.send("sessionBackgrounded", .object(["sessionId": .string(sid)]))
        #expect(presence() == .background)
        client.send("sessionForegrounded", .object(["sessionId": .string(sid)]))
        #expect(presence() == .foreground)
        client.send("client_backgrounding", .object(["sessionId": .string(sid)]))
        #expect(presence() == .background)
        let body: JSONValue = .object(["sessionId": .string(sid), "workingDirectory": .string(bed.path("app"))])
        _ = try bed.restJSON("POST", "/api/sessions/continue", json: body, device: "presence-dev")
        #expect(presence() == .foreground)
        client.socket.close()
        #expect(presence() == .offline)
    }

    @Test func devicesWithoutAnIDAreKeyedByUserAgent() {
        let bed = CompanionTestbed()
        _ = bed.connect(userAgent: "Companion/1 CFNetwork")
        _ = bed.connect(userAgent: "Companion/1 CFNetwork")
        _ = bed.connect(userAgent: "SomethingElse/2")
        _ = bed.connect(device: "explicit-id", userAgent: "Companion/1 CFNetwork")
        let devices = bed.bed.journal.devices.values.filter { $0.protocolName == "companion" }
        #expect(devices.count == 3, "the same user agent is one device")
        #expect(devices.contains { $0.id == CompanionTestbed.deviceID("explicit-id") && $0.claimedName == "explicit-id" })
        #expect(devices.filter { $0.id.hasPrefix("companion:ua:") }.count == 2)
    }
}
