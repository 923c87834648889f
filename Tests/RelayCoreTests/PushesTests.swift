import Foundation
import RelayCore
import RelayTesting
import Testing

/// Sinks that record what they were handed and answer with `answer`.
final class RecordingDispatcher: PushDispatcher {
    var deliveries: [PushDelivery] = []
    var answer: (PushDelivery) -> PushReport = { _ in PushReport() }
    /// When set, deliveries are recorded and never answered (a send still in flight).
    var hold = false

    func dispatch(_ delivery: PushDelivery, completion: @escaping (PushReport) -> Void) {
        deliveries.append(delivery)
        if !hold { completion(answer(delivery)) }
    }
}

@Suite struct PushesTests {
    let core = CoreFixture()
    var journal: MemoryJournal { core.journal }
    let sinks = RecordingDispatcher()
    let target: PushTarget

    init() {
        target = PushTarget(deviceID: "phone", kind: .apns, token: String(repeating: "ab", count: 32), registeredAt: 0)
        core.journal.pushDevices = [PushDevice(deviceID: "phone", userID: core.user, protocolName: "test", targets: [target])]
    }

    func enable(delay: Int64 = 0, quiet: QuietHours? = nil) {
        core.hub.pushes.enable(dispatcher: sinks, settings: Pushes.Settings(delayMillis: delay, quietHours: quiet))
        core.loop.runUntilIdle()
    }

    /// A turn from `device` answered with `answer`.
    func turn(_ text: String, answer: String, from device: String = "laptop") {
        core.submit(core.message(text, device: device))
        core.emit(.final(answer), run: core.backend.runs.count - 1)
    }

    @Test func aBackgroundDeviceGetsOnePushWithTheAnswer() {
        enable()
        core.connect("phone")
        core.hub.presence.signal(.backgrounded, deviceID: "phone")
        turn("hi", answer: "hello there")
        core.loop.advance(millis: 0)
        #expect(sinks.deliveries.count == 1)
        let delivery = sinks.deliveries[0]
        #expect(delivery.content.body == "hello there")
        #expect(delivery.content.title == "scripted", "no title: the backend's name")
        #expect(delivery.content.threadID == core.conversation.id)
        #expect(delivery.push.count == 1 && delivery.device.targets == [target])
        #expect(journal.pendingPushes.isEmpty, "sent pushes leave the journal")
    }

    @Test func aForegroundDeviceGetsNone() {
        enable()
        core.connect("phone")
        turn("hi", answer: "hello")
        core.loop.advance(millis: 10_000)
        #expect(sinks.deliveries.isEmpty)
    }

    @Test func userMessagesAndAbortsMakeNoPush() {
        enable()
        core.connect("phone")
        core.hub.presence.signal(.backgrounded, deviceID: "phone")
        core.submit(core.message("hi", device: "laptop"))
        core.hub.turns.abort(conversationID: core.conversation.id)
        core.loop.advance(millis: 10_000)
        #expect(sinks.deliveries.isEmpty)
    }

    @Test func finalsWithinTheDelayAreCoalescedIntoOnePush() {
        enable(delay: 5_000)
        for index in 1...3 { turn("q\(index)", answer: "a\(index)") }
        #expect(journal.pendingPushes.count == 1, "one durable pending push per device and conversation")
        core.loop.advance(millis: 4_999)
        #expect(sinks.deliveries.isEmpty)
        core.loop.advance(millis: 1)
        #expect(sinks.deliveries.count == 1)
        #expect(sinks.deliveries[0].push.count == 3)
        #expect(sinks.deliveries[0].content.body == "3 new messages in scripted")
    }

    @Test func theDelayIsCancelledWhenTheDeviceComesBack() {
        enable(delay: 5_000)
        let (_, _) = core.connect("phone")
        core.hub.presence.signal(.backgrounded, deviceID: "phone")
        turn("hi", answer: "hello")
        core.hub.presence.signal(.foregrounded, deviceID: "phone")
        core.loop.advance(millis: 10_000)
        #expect(sinks.deliveries.isEmpty)
        #expect(journal.pendingPushes.isEmpty)
        #expect(core.hub.pushes.cancelledCount == 1)
    }

    @Test func theDelayIsCancelledByAReadOnAnotherDevice() {
        enable(delay: 5_000)
        turn("hi", answer: "hello")
        let seq = core.journal.events.map(\.seq).max()!
        core.connect("laptop")
        core.hub.read(deviceID: "laptop", conversationID: core.conversation.id, seq: seq)
        core.loop.advance(millis: 10_000)
        #expect(sinks.deliveries.isEmpty)
    }

    @Test func aReadBeforeTheNewestEventKeepsThePush() {
        enable(delay: 5_000)
        turn("one", answer: "first")
        let firstSeq = core.journal.events.map(\.seq).max()!
        turn("two", answer: "second")
        core.connect("laptop")
        core.hub.read(deviceID: "laptop", conversationID: core.conversation.id, seq: firstSeq)
        core.loop.advance(millis: 10_000)
        #expect(sinks.deliveries.count == 1, "the second answer is still unread")
    }

    @Test func anotherDeviceTakingTheAnswerLiveHasReadIt() {
        enable(delay: 5_000)
        core.connect("laptop")
        turn("hi", answer: "hello")
        core.loop.advance(millis: 10_000)
        #expect(sinks.deliveries.isEmpty, "the laptop in the foreground showed it")
    }

    @Test func withoutADelayAPushGoesEvenWhenAnotherDeviceShowsIt() {
        enable()
        core.connect("laptop")
        turn("hi", answer: "hello")
        core.loop.advance(millis: 0)
        #expect(sinks.deliveries.count == 1)
    }

    @Test func aRetiredTargetGetsNoMorePushes() {
        sinks.answer = { delivery in PushReport(attempts: [], retired: delivery.device.targets.map { ($0, "BadDeviceToken") }) }
        enable()
        turn("one", answer: "first")
        core.loop.advance(millis: 0)
        #expect(journal.retiredTargets.count == 1)
        turn("two", answer: "second")
        core.loop.advance(millis: 1_000)
        #expect(sinks.deliveries.count == 1)
    }

    @Test func aPushLeftPendingByAStopIsSentOnceWhenDue() {
        let stored = PendingPush(
            id: "6f1c1f9e-5e0b-4d7e-9a61-2c8f0f3f2a11",
            deviceID: "phone",
            userID: core.user,
            conversationID: core.conversation.id,
            count: 2,
            lastSeq: 7,
            failed: false,
            text: "done",
            runMillis: 0,
            createdAt: 0,
            dueAt: core.loop.clock.nowMillis() + 2_000
        )
        journal.pendingPushes[stored.id] = stored
        enable()
        core.loop.advance(millis: 1_999)
        #expect(sinks.deliveries.isEmpty)
        core.loop.advance(millis: 1)
        #expect(sinks.deliveries.map(\.push.id) == [stored.id])
        core.loop.advance(millis: 60_000)
        #expect(sinks.deliveries.count == 1)
        #expect(journal.pendingPushes.isEmpty)
    }

    @Test func quietHoursHoldAPushUntilTheWindowEnds() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        // The test clock starts at a fixed instant; build a window that contains it.
        let now = core.loop.clock.nowMillis()
        let minute = Int((now / 60_000) % 1_440)
        let window = String(format: "%02d:%02d-%02d:%02d", minute / 60, minute % 60, ((minute + 60) % 1_440) / 60, minute % 60)
        let quiet = try #require(QuietHours(window, timeZone: utc))
        enable(quiet: quiet)
        turn("hi", answer: "hello")
        core.loop.advance(millis: 59 * 60_000)
        #expect(sinks.deliveries.isEmpty)
        core.loop.advance(millis: 60_000)
        #expect(sinks.deliveries.count == 1)
    }

    @Test func quietHoursParseAndWrapMidnight() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        let quiet = try #require(QuietHours("22:00-07:00", timeZone: utc))
        let day: Int64 = 20_000 * 86_400_000
        #expect(quiet.release(day + 23 * 3_600_000 + 30 * 60_000) == day + 86_400_000 + 7 * 3_600_000)
        #expect(quiet.release(day + 3 * 3_600_000 + 15_000) == day + 7 * 3_600_000)
        #expect(quiet.release(day + 12 * 3_600_000) == day + 12 * 3_600_000, "outside the window: at once")
        #expect(QuietHours("25:00-07:00", timeZone: utc) == nil)
        #expect(QuietHours("7:00-8:00", timeZone: utc) == nil)
        #expect(QuietHours("08:00-08:00", timeZone: utc) == nil)
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let local = try #require(QuietHours("22:00-07:00", timeZone: berlin))
        // 06:30 UTC in winter is 07:30 in Berlin: outside.
        let winter: Int64 = 1_767_225_600_000  // 2026-01-01T00:00Z
        #expect(!local.contains(winter + 6 * 3_600_000 + 30 * 60_000))
        #expect(local.contains(winter + 5 * 3_600_000 + 30 * 60_000))
    }
}
