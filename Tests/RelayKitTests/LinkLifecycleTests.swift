import RelayKit
import RelayTesting
import Testing

@Suite struct LinkLifecycleTests: LinkMachineSuite {
    enum Session: Equatable, Sendable {
        case greeting
        case ready
    }

    typealias Lifecycle = LinkLifecycle<Session>
    typealias Action = LinkAction<String>

    /// Zero jitter: each retry waits 80 % of its step.
    func lifecycle(timing: LinkTiming = LinkTiming(), random: @escaping (Int) -> Int = { _ in 0 }) -> Lifecycle {
        Lifecycle(endpoint: "h:1", timing: timing, random: random)
    }

    func open(_ link: inout Lifecycle, at now: Int64 = 0, awaiting: String? = "hello") {
        let _: [Action] = link.connect(reporting: "connecting to h:1")
        let _: [Action] = link.opened(now: now, session: .greeting, awaiting: awaiting)
    }

    func established(at clock: TestClock) -> Lifecycle {
        var link = lifecycle()
        open(&link, at: clock.nowMillis())
        let _: [Action] = link.establish(.ready, detail: "h:1")
        return link
    }

    @Test func connectsOnceOpensAndIsConnectedOnlyOnceEstablished() {
        var link = lifecycle()
        let connect: [Action] = link.connect(reporting: "connecting to h:1")
        #expect(connect == [.report(.connecting, "connecting to h:1"), .connect])
        #expect((link.connect(reporting: "again") as [Action]).isEmpty, "one try at a time")
        #expect(link.phase == .connecting)
        let opened: [Action] = link.opened(now: 5, session: .greeting, awaiting: "hello", first: [.send("hi")])
        #expect(opened == [.send("hi"), .armTick(afterMillis: 15_000)])
        #expect(link.isOpen && !link.isEstablished && link.session == .greeting && link.socket?.openedAt == 5)
        link.update(.ready)
        #expect(link.session == .ready && !link.isEstablished)
        let up: [Action] = link.establish(.ready, detail: "h:1, v2")
        #expect(up == [.report(.connected, "h:1, v2")] && link.isEstablished && link.state == .connected)
    }

    @Test func theFirstStepMayBeTheProtocolsOwn() {
        var link = lifecycle()
        let connect: [Action] = link.connect(reporting: "registering with h:1", first: .own("register"))
        #expect(connect == [.report(.connecting, "registering with h:1"), .own("register")])
    }

    @Test func staleInputsDoNothing() {
        var link = lifecycle()
        #expect((link.opened(now: 0, session: .greeting, awaiting: nil) as [Action]).isEmpty)
        #expect((link.tick(now: 0, silentMillis: 0) as [Action]).isEmpty)
        #expect((link.closed(code: nil, error: "x") as [Action]).isEmpty)
        #expect((link.close(LinkClosing("x")) as [Action]).isEmpty)
        #expect((link.establish(.ready, detail: "x") as [Action]).isEmpty)
        link.heard(now: 1)
        link.update(.ready)
        #expect(link.phase == .idle)
    }

    @Test func aLateHandshakeIsClosedAndRetried() {
        let clock = TestClock(startMillis: 1_000)
        var link = lifecycle(timing: LinkTiming(handshakeTimeoutMillis: 10_000, handshakeCloseReason: "late"))
        open(&link, at: clock.nowMillis(), awaiting: "welcome")
        clock.advance(millis: 9_999)
        #expect((link.tick(now: clock.nowMillis(), silentMillis: 0) as [Action]) == [.ping, .armTick(afterMillis: 15_000)])
        clock.advance(millis: 1)
        #expect((link.tick(now: clock.nowMillis(), silentMillis: 0) as [Action]) == [.close(code: 4000, reason: "late")])
        #expect(link.closing == LinkClosing("h:1 sent no welcome within 10.0 s"))
        #expect((link.tick(now: clock.nowMillis(), silentMillis: 0) as [Action]).isEmpty, "a closing socket is not pinged")
        let closed: [Action] = link.closed(code: 4000, error: nil)
        #expect(closed == [.cancelTick, .report(.retrying, "h:1 sent no welcome within 10.0 s; next try in 0.8 s"), .armRetry(afterMillis: 800)])
        #expect(link.phase == .waitingToRetry)
    }

    @Test func aWaitWithoutDeadlineAndAnEstablishedSocketAreNotTimedOut() {
        let clock = TestClock(startMillis: 0)
        var link = lifecycle()
        open(&link, at: 0, awaiting: nil)
        clock.advance(millis: 60_000)
        #expect((link.tick(now: clock.nowMillis(), silentMillis: 0) as [Action]) == [.ping, .armTick(afterMillis: 15_000)])
        var ready = established(at: TestClock(startMillis: 0))
        #expect((ready.tick(now: 60_000, silentMillis: 0) as [Action]) == [.ping, .armTick(afterMillis: 15_000)])
    }

    @Test func silenceIsTheYoungerOfTheLastFrameAndTheLastPong() {
        let clock = TestClock(startMillis: 0)
        var link = established(at: clock)
        clock.advance(millis: 44_999)
        #expect((link.tick(now: clock.nowMillis(), silentMillis: 44_999) as [Action]).contains(.ping))
        clock.advance(millis: 1)
        #expect((link.tick(now: clock.nowMillis(), silentMillis: 10) as [Action]).contains(.ping), "a pong 10 ms ago")
        link.heard(now: clock.nowMillis())
        clock.advance(millis: 30_000)
        #expect((link.tick(now: clock.nowMillis(), silentMillis: 75_000) as [Action]).contains(.ping), "a frame 30 s ago")
        clock.advance(millis: 15_000)
        #expect((link.tick(now: clock.nowMillis(), silentMillis: 90_000) as [Action]) == [.close(code: 4000, reason: "")])
        let closed: [Action] = link.closed(code: nil, error: nil)
        #expect(detail(closed) == "h:1 answered no ping within 45.0 s; next try in 0.8 s")
    }

    @Test func silentTicksCountIntervalsWithoutAFrame() {
        var link = lifecycle(timing: LinkTiming(tickMillis: 10_000, watchdog: .silentTicks(2), silenceCloseReason: "no pong"))
        open(&link, awaiting: nil)
        #expect((link.tick(now: 10_000, silentMillis: 0) as [Action]).contains(.ping), "one silent interval")
        link.heard(now: 12_000)
        #expect((link.tick(now: 20_000, silentMillis: 0) as [Action]).contains(.ping), "heard: the count starts over")
        #expect((link.tick(now: 30_000, silentMillis: 0) as [Action]).contains(.ping))
        #expect((link.tick(now: 40_000, silentMillis: 0) as [Action]) == [.close(code: 4000, reason: "no pong")])
        #expect(link.closing?.reason == "h:1 answered no ping within 20.0 s")
    }

    @Test func retriesBackOffWithJitterUpToTheCapAndResetOnceEstablished() {
        var low = lifecycle()
        var high = lifecycle(random: { $0 })
        var lows: [Int] = []
        var highs: [Int] = []
        for _ in 0..<7 {
            let _: [Action] = low.connect(reporting: "c")
            let _: [Action] = high.connect(reporting: "c")
            lows.append(retryDelay(low.closed(code: nil, error: "refused") as [Action]) ?? -1)
            highs.append(retryDelay(high.closed(code: nil, error: "refused") as [Action]) ?? -1)
        }
        #expect(lows == [800, 1_600, 3_200, 6_400, 12_800, 24_000, 24_000], "-20 %")
        #expect(highs == [1_200, 2_400, 4_800, 9_600, 19_200, 36_000, 36_000], "+20 %")
        open(&low)
        #expect(retryDelay(low.closed(code: 1001, error: nil) as [Action]) == 24_000, "an open socket alone does not reset")
        open(&low)
        let _: [Action] = low.establish(.ready, detail: "h:1")
        #expect(retryDelay(low.closed(code: 1001, error: nil) as [Action]) == 800)
    }

    @Test func aDropNobodyAskedForReadsTheErrorElseThePeersCode() {
        let link = lifecycle()
        #expect(link.peerClosed(code: 1001, error: nil) == LinkClosing("h:1 closed the connection (1001)"))
        #expect(link.peerClosed(code: nil, error: nil) == LinkClosing("h:1 closed the connection"))
        #expect(link.peerClosed(code: 1001, error: "reset") == LinkClosing("reset"))
    }

    @Test func thisSidesClosingDecidesTheReportAndTheWait() {
        var link = lifecycle()
        open(&link)
        let refused = LinkClosing("token refused", state: .badCredentials, saturatesBackoff: true)
        #expect((link.close(refused, code: 4001, reason: "bye") as [Action]) == [.close(code: 4001, reason: "bye")])
        let closed: [Action] = link.closed(code: 1000, error: "ignored")
        #expect(closed == [.cancelTick, .report(.badCredentials, "token refused; next try in 24.0 s"), .armRetry(afterMillis: 24_000)])
        #expect((link.connect(reporting: "c") as [Action]) == [.connect], "bad credentials stay shown while retrying")
        open(&link, awaiting: nil)
        let before = link.backoff
        let _: [Action] = link.close(LinkClosing("wait", state: .awaitingApproval, retryAfterMillis: 30_000))
        let waiting: [Action] = link.closed(code: nil, error: nil)
        #expect(waiting == [.cancelTick, .report(.awaitingApproval, "wait; next try in 30.0 s"), .armRetry(afterMillis: 30_000)])
        #expect(link.backoff == before, "a fixed wait leaves the backoff where it was")
        #expect((link.connect(reporting: "c") as [Action]) == [.connect], "awaiting approval stays shown while retrying")
        open(&link)
        let _: [Action] = link.report(.connecting, "paired")
        let _: [Action] = link.close(LinkClosing(nil, retryAfterMillis: 0), code: 1000, reason: "paired")
        #expect((link.closed(code: 1000, error: nil) as [Action]) == [.cancelTick, .armRetry(afterMillis: 0)], "said already: no report")
    }

    @Test func aTryMayEndBeforeItsSocket() {
        var link = lifecycle()
        let _: [Action] = link.connect(reporting: "registering", first: .own("register"))
        let failed: [Action] = link.retry(LinkClosing("setup token refused", state: .badCredentials, saturatesBackoff: true))
        #expect(failed == [.cancelTick, .report(.badCredentials, "setup token refused; next try in 24.0 s"), .armRetry(afterMillis: 24_000)])
        #expect((link.retry(LinkClosing("again")) as [Action]).isEmpty, "already waiting")
    }

    @Test func aStopReportsFailedAndEndsEverything() {
        var link = lifecycle()
        open(&link)
        let stopped: [Action] = link.stop("denied; restart the relay")
        #expect(stopped == [.cancelTick, .report(.failed, "denied; restart the relay"), .close(code: 1000, reason: "")])
        #expect(link.isStopped && link.state == .failed)
        #expect((link.closed(code: 1000, error: nil) as [Action]).isEmpty, "no retry")
        #expect((link.connect(reporting: "c") as [Action]).isEmpty)
        #expect((link.stop("again") as [Action]).isEmpty)
    }

    @Test func anOwnerStopsQuietlyAndASocketOpeningAfterwardsIsClosed() {
        var link = lifecycle()
        let _: [Action] = link.connect(reporting: "c")
        #expect((link.stop(nil) as [Action]) == [.cancelTick], "no socket to close, nothing to report")
        #expect(link.state == .connecting)
        #expect((link.opened(now: 0, session: .greeting, awaiting: nil) as [Action]) == [.close(code: 1000, reason: "")])
    }

    @Test func aProtocolThatLearnsItsTickRetunesTheWatchdog() {
        var link = lifecycle()
        open(&link)
        let up: [Action] = link.establish(.ready, detail: "h:1", tickMillis: 500, watchdog: .silence(millis: 1_000))
        #expect(up == [.report(.connected, "h:1"), .armTick(afterMillis: 500)])
        #expect((link.tick(now: 500, silentMillis: 0) as [Action]) == [.ping, .armTick(afterMillis: 500)])
        #expect((link.tick(now: 1_000, silentMillis: 1_000) as [Action]) == [.close(code: 4000, reason: "")])
        let _: [Action] = link.closed(code: nil, error: nil)
        let _: [Action] = link.connect(reporting: "c")
        #expect((link.opened(now: 0, session: .greeting, awaiting: nil) as [Action]) == [.armTick(afterMillis: 15_000)], "each socket starts again")
    }
}
