import ClawlineWire
import RelayCore
import Testing

@testable import ClawlineBridge

@Suite struct ClawlineTurnBookTests {
    typealias Fixture = ClawlineTurnBookFixture

    /// A fixture whose link is up with one turn `t1` sent as `c_1`, acknowledged or not.
    func running(acked: Bool = true) -> Fixture {
        var f = Fixture()
        _ = f.up()
        _ = f.start("t1")
        if acked { _ = f.receive(.ack(.init(id: "c_1"))) }
        return f
    }

    @Test func waitsForTheLinkThenResendsTheSameIDEveryFiveSecondsUntilAcked() {
        var f = Fixture()
        #expect(Fixture.events(f.start("t1")) == ["t1": [.typing(true)]], "nothing goes out before the link is up")
        let sent = Fixture.sent(f.up())
        #expect(sent == [.object(["type": .string("message"), "id": .string("c_1"), "content": .string("hi")])])
        #expect(f.advance(seconds: 4).isEmpty)
        #expect(Fixture.sentIDs(f.advance(seconds: 1)) == ["c_1"], "same frame, same id")
        #expect(Fixture.sentIDs(f.advance(seconds: 5)) == ["c_1"])
        _ = f.receive(.ack(.init(id: "c_1")))
        #expect(f.advance(seconds: 5).isEmpty, "an ack stops the resends")
        #expect(f.advance(seconds: 60).isEmpty)
    }

    @Test func attachmentsGoOutWithTheTextEveryTimeAndOnesTheProviderWouldRefuseFailTheTurn() throws {
        var f = Fixture()
        _ = f.up()
        let image = JSONValue.object(["type": .string("image"), "mimeType": .string("image/png"), "data": .string("iVBORw0KGgo=")])
        let first = Fixture.sent(f.book.start("t1", text: "look", attachments: [image], now: f.now))
        #expect(first.first?["attachments"] == .array([image]))
        #expect(Fixture.sent(f.advance(seconds: 5)).first?["attachments"] == .array([image]), "a resend carries them too")
        let tooMany = Array(repeating: image, count: MessageRules.maxAttachments + 1)
        let refused = try #require(Fixture.events(f.book.start("t2", text: "many", attachments: tooMany, now: f.now))["t2"])
        guard case .failed(let reason) = refused.first else {
            Issue.record("not failed: \(refused)")
            return
        }
        #expect(reason.contains("would refuse these attachments") && reason.contains("at most \(MessageRules.maxAttachments)"))
    }

    @Test func anAnswerStreamsAndCompletesAndOnlyThenTheNextTurnGoesOut() {
        var f = Fixture()
        _ = f.up()
        #expect(Fixture.sentIDs(f.start("t1", "first")) == ["c_1"])
        #expect(Fixture.sentIDs(f.start("t2", "second")).isEmpty, "one turn at a time")
        _ = f.receive(.ack(.init(id: "c_1")))
        f.echo("first")
        #expect(Fixture.events(f.streaming("s_a", "Hel")) == ["t1": [.progress("Hel")]])
        #expect(Fixture.events(f.streaming("s_a", "Hello")) == ["t1": [.progress("Hello")]])
        let done = f.final("s_a", "Hello there")
        #expect(Fixture.events(done) == ["t1": [.final("Hello there")]])
        #expect(Fixture.sentIDs(done) == ["c_2"])
        #expect(Fixture.events(f.final("s_a", "Hello there")).isEmpty, "the same event twice is dropped")
    }

    @Test func aFinalInTheReplayCompletesTheTurnWhoseLinkDropped() {
        var f = running()
        f.echo()
        _ = f.streaming("s_a", "Hel")
        f.book.linkDown()
        #expect(f.up(replay: 1).isEmpty, "waits for the replay")
        let replayed = f.final("s_a", "Hello")
        #expect(Fixture.events(replayed) == ["t1": [.final("Hello")]])
        #expect(Fixture.sent(replayed).isEmpty, "answered: not asked again")
    }

    @Test func anEchoAndFinalBothInTheReplayCompleteTheTurn() {
        var f = running()
        f.book.linkDown()
        _ = f.up(replay: 2)
        f.echo()
        #expect(Fixture.events(f.final("s_b", "Hello")) == ["t1": [.final("Hello")]])
    }

    @Test func aTurnWhoseAnswerDiedWithTheLinkIsAskedAgainUnderANewID() {
        var f = running()
        f.echo()
        _ = f.streaming("s_a", "Hel")
        f.book.linkDown()
        let again = f.up(replay: 0)
        #expect(Fixture.sentIDs(again) == ["c_2"], "acknowledged, then lost: a new message")
        _ = f.receive(.ack(.init(id: "c_2")))
        f.echo()
        #expect(Fixture.events(f.final("s_c", "Hello again")) == ["t1": [.final("Hello again")]])
    }

    @Test func anUnacknowledgedMessageIsResentUnderItsIDAfterAReconnect() {
        var f = running(acked: false)
        f.book.linkDown()
        #expect(f.advance(seconds: 5).isEmpty, "no resend while down")
        #expect(Fixture.sentIDs(f.up()) == ["c_1"])
    }

    @Test func otherDevicesMessagesAndTheirAnswersAreNeverOurs() {
        var f = Fixture()
        _ = f.up()
        f.echo("theirs", from: Fixture.other)
        _ = f.start("t1", "mine")
        _ = f.receive(.ack(.init(id: "c_1")))
        f.echo("mine")
        f.echo("later", from: Fixture.other)
        #expect(f.streaming("s_x", "for theirs").isEmpty)
        #expect(f.final("s_x", "for theirs").isEmpty, "the older echo's answer")
        #expect(Fixture.events(f.final("s_y", "for mine")) == ["t1": [.final("for mine")]])
        #expect(f.final("s_z", "for later").isEmpty)
    }

    @Test func theAdminChannelIsAnotherTimeline() {
        var f = running()
        f.echo()
        let admin = ServerFrame.Message(id: "s_adm", role: "assistant", content: "admin talk", channelType: .admin)
        #expect(f.receive(.message(admin)).isEmpty)
        #expect(Fixture.events(f.final("s_a", "mine")) == ["t1": [.final("mine")]])
    }

    @Test func aReplayAfterAHistoryResetIsNotTakenAsOurs() {
        var f = running()
        f.book.linkDown()
        _ = f.up(replay: 2, historyReset: true)
        f.echo()
        let replayed = f.final("s_old", "an old answer to the same words")
        #expect(Fixture.events(replayed).isEmpty)
        #expect(Fixture.sentIDs(replayed) == ["c_2"], "asked again once the replay is over")
    }

    @Test func aReplayThatNeverEndsCountsAsOverAfterTenSeconds() {
        var f = Fixture()
        _ = f.start("t1")
        _ = f.up(replay: 5)
        #expect(f.advance(seconds: 9).isEmpty)
        #expect(Fixture.sentIDs(f.advance(seconds: 1)) == ["c_1"])
    }

    @Test func providerErrorsForOurMessage() {
        var f = running(acked: false)
        #expect(f.receive(.error(.init(code: "rate_limited", message: "slow", messageId: "c_1"))).isEmpty)
        #expect(Fixture.sentIDs(f.receive(.error(.init(code: "invalid_message", message: "failed before", messageId: "c_1")))) == ["c_2"])
        #expect(f.receive(.error(.init(code: "server_error", message: "not ours", messageId: "c_9"))).isEmpty)
        _ = f.receive(.ack(.init(id: "c_2")))
        f.echo()
        _ = f.start("t2")
        let failed = f.receive(.error(.init(code: "server_error", message: "the assistant failed", messageId: "c_2")))
        #expect(Fixture.events(failed)["t1"] == [.failed("the provider answered server_error: the assistant failed")])
        #expect(Fixture.sentIDs(failed) == ["c_3"], "the next turn goes out; its answer is its own")
        f.echo()
        #expect(Fixture.events(f.final("s_t2", "for t2")) == ["t2": [.final("for t2")]])
    }

    @Test func aMessageTheProviderKeepsLosingFailsAfterThreeIDs() {
        var f = running(acked: false)
        _ = f.receive(.error(.init(code: "invalid_message", message: "no", messageId: "c_1")))
        _ = f.receive(.error(.init(code: "invalid_message", message: "no", messageId: "c_2")))
        let failed = f.receive(.error(.init(code: "invalid_message", message: "no", messageId: "c_3")))
        #expect(Fixture.events(failed) == ["t1": [.failed("the provider lost the message 3 times")]])
    }

    @Test func cancellingASentTurnAsksForAFreshLinkBeforeTheNextTurn() {
        var f = running()
        _ = f.start("t2", "next")
        f.echo()
        let cancelled = f.book.cancel("t1", now: f.now)
        #expect(Fixture.resyncs(cancelled) == 1 && Fixture.sent(cancelled).isEmpty && Fixture.events(cancelled).isEmpty)
        f.book.linkDown()
        #expect(Fixture.sentIDs(f.up()) == ["c_2"])
        f.echo("next")
        #expect(Fixture.events(f.final("s_n", "for next")) == ["t2": [.final("for next")]], "the dead echo left with the old link")
    }

    @Test func cancellingAWaitingTurnJustForgetsIt() {
        var f = running()
        _ = f.start("t2")
        #expect(f.book.cancel("t2", now: f.now).isEmpty)
        #expect(f.book.count == 1)
    }

    @Test func noAckWithinTwoMinutesFailsTheTurnAndResyncs() {
        var f = running(acked: false)
        var resent = 0
        for _ in 0..<23 { resent += Fixture.sentIDs(f.advance(seconds: 5)).count }
        #expect(resent == 23)
        let expired = f.advance(seconds: 5)
        #expect(Fixture.events(expired) == ["t1": [.failed("the provider did not acknowledge the message within 120 s")]])
        #expect(Fixture.resyncs(expired) == 1)
    }

    @Test func aTurnWhoseLinkNeverComesUpFailsAfterTwoMinutes() {
        var f = Fixture()
        _ = f.start("t1")
        #expect(f.advance(seconds: 119).isEmpty)
        let expired = f.advance(seconds: 1)
        #expect(Fixture.events(expired) == ["t1": [.failed("the provider was not reachable for 120 s")]])
        #expect(Fixture.resyncs(expired) == 0, "nothing was sent: nothing to drop")
    }

    @Test func anAnswerSilentForFiveMinutesFails() {
        var f = running()
        f.echo()
        _ = f.advance(seconds: 200)
        _ = f.receive(.typing(.init(active: true, channelType: .personal)))
        #expect(f.advance(seconds: 200).isEmpty, "typing counts as a sign of life")
        let expired = f.advance(seconds: 100)
        #expect(Fixture.events(expired) == ["t1": [.failed("no answer from the provider for 300 s")]])
    }

    @Test func boundsAndFailAll() {
        var limits = ClawlineTurnBook.Limits()
        limits.maxQueued = 2
        var f = Fixture(limits: limits)
        for id in ["a", "b", "c"] { _ = f.start(id) }
        #expect(Fixture.events(f.start("d")) == ["d": [.failed("3 turns are already waiting on this account")]])
        #expect(Fixture.events(f.start("e", "")) == ["e": [.failed("a Clawline message holds 1 byte to 64 KB of text; this one has 0")]])
        let all = Fixture.events(f.book.failAll("gone"))
        #expect(all == ["a": [.failed("gone")], "b": [.failed("gone")], "c": [.failed("gone")]])
        #expect(f.book.count == 0 && !f.book.needsTicks)
    }
}
