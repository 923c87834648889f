import DiscoClawWire
import RelayCore
import RelayTesting
import Testing

@testable import DiscoClawBridge

@Suite struct DiscoClawLinkMachineTests: LinkMachineSuite {
    typealias Machine = DiscoClawLinkMachine

    /// A machine whose jitter is always zero: retries wait 80 % of the backoff.
    func machine(hasToken: Bool = true) -> Machine { Machine(endpoint: "127.0.0.1:4242", hasToken: hasToken, pingIntervalMillis: 15_000) { _ in 0 } }

    func ready(at clock: TestClock = TestClock(startMillis: 0)) -> Machine {
        var link = machine()
        _ = link.connect()
        _ = link.opened(now: clock.nowMillis())
        _ = link.caughtUp()
        return link
    }

    @Test func connectedOnlyAfterTheCatchUp() {
        var link = machine()
        #expect(link.connect() == [.report(.connecting, "connecting to 127.0.0.1:4242"), .connect])
        #expect(link.opened(now: 0) == [.own(.catchUp), .armTick(afterMillis: 15_000)])
        #expect(!link.isReady && link.state == .connecting && link.isOpen)
        #expect(link.caughtUp() == [.report(.connected, "127.0.0.1:4242")])
        #expect(link.isReady)
        #expect(link.caughtUp().isEmpty, "a second catch-up does not report again")
    }

    @Test func eventsAreHandedOverFromTheSocketsOpening() {
        var link = machine()
        let delta = Array(#"{"type":"message.delta","messageId":"m1","delta":"he","seq":3}"#.utf8)
        #expect(link.received(delta, now: 0).isEmpty, "no socket")
        _ = link.connect()
        _ = link.opened(now: 0)
        #expect(link.received(delta, now: 1) == [.own(.event(.delta("m1", "he", seq: 3)))], "during the catch-up too")
        #expect(link.received(Array("not json".utf8), now: 2).isEmpty)
    }

    @Test func aSetupTokenRegistersOnceBeforeConnecting() {
        var link = machine(hasToken: false)
        #expect(link.connect() == [.report(.connecting, "registering with 127.0.0.1:4242"), .own(.register)])
        #expect(link.closed(code: nil, error: "x").isEmpty, "no socket while registering")
        #expect(link.registered() == [.report(.connecting, "registered; connecting to 127.0.0.1:4242"), .connect])
        #expect(link.hasToken)
        _ = link.opened(now: 0)
        _ = link.caughtUp()
        _ = link.closed(code: nil, error: nil)
        #expect(link.connect().last == .connect, "reconnects go straight to the socket")
    }

    @Test func aRefusedSetupTokenIsBadCredentialsAtTheLongestBackoff() {
        var link = machine(hasToken: false)
        _ = link.connect()
        let failed = link.registrationFailed("127.0.0.1:4242 refused the setup token (401: Invalid setup token)", refused: true)
        #expect(reports(failed) == [.badCredentials])
        #expect(retryDelay(failed) == 24_000)
        #expect(detail(failed) == "127.0.0.1:4242 refused the setup token (401: Invalid setup token); next try in 24.0 s")
        #expect(link.connect() == [.own(.register)], "no flapping to connecting while the credentials are bad")
        let unreachable = link.registrationFailed("connection refused", refused: false)
        #expect(reports(unreachable) == [.retrying])
    }

    @Test func aTokenRefusedAtTheUpgradeIsBadCredentialsWithoutAHotLoop() {
        var link = machine()
        _ = link.connect()
        let refused = link.closed(code: nil, error: "HS: ws upgrade unauthorized")
        #expect(reports(refused) == [.badCredentials])
        #expect(detail(refused) == "the token was refused by 127.0.0.1:4242 (401); next try in 24.0 s")
        #expect(retryDelay(refused) == 24_000)
        #expect(link.connect() == [.connect])
        #expect(retryDelay(link.closed(code: nil, error: "HS: ws upgrade unauthorized")) == 24_000, "still the longest wait")
        _ = link.connect()
        _ = link.opened(now: 0)
        #expect(reports(link.caughtUp()) == [.connected], "a token that works again heals the link")
    }

    @Test func aTokenRefusedOnRESTClosesTheSocketAsBadCredentials() {
        var link = ready()
        #expect(link.tokenRefused() == [.close(code: 4001, reason: "token refused")])
        #expect(reports(link.closed(code: 4001, error: nil)) == [.badCredentials])
        #expect(link.tokenRefused().isEmpty, "nothing to close while waiting")
    }

    @Test func pingsEveryIntervalAndLeavesASilentServer() {
        let clock = TestClock(startMillis: 0)
        var link = ready(at: clock)
        clock.advance(millis: 15_000)
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 100) == [.own(.tick(15_000)), .ping, .armTick(afterMillis: 15_000)])
        clock.advance(millis: 15_000)
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 29_999) == [.own(.tick(30_000)), .ping, .armTick(afterMillis: 15_000)])
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 30_000) == [.own(.tick(30_000)), .close(code: 4000, reason: "no pong")])
        let closed = link.closed(code: nil, error: nil)
        #expect(reports(closed) == [.retrying])
        #expect(detail(closed) == "127.0.0.1:4242 answered no ping within 30.0 s; next try in 0.8 s")
        #expect(closed.first == .cancelTick)
    }

    @Test func anEventKeepsAServerThatAnswersNoPing() {
        let clock = TestClock(startMillis: 0)
        var link = ready(at: clock)
        clock.advance(millis: 20_000)
        _ = link.received(Array(#"{"type":"conversation.updated"}"#.utf8), now: clock.nowMillis())
        clock.advance(millis: 15_000)
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 35_000).contains(.ping))
    }

    @Test func aFailedCatchUpDropsTheSocketAndRetries() {
        var link = machine()
        _ = link.connect()
        _ = link.opened(now: 0)
        #expect(link.catchUpFailed("up: /sync failed: 500") == [.close(code: 4000, reason: "sync failed")])
        let closed = link.closed(code: nil, error: nil)
        #expect(detail(closed) == "up: /sync failed: 500; next try in 0.8 s")
        #expect(!link.isReady)
    }

    @Test func aDropNobodyAskedForNamesTheEndpoint() {
        var link = ready()
        #expect(detail(link.closed(code: nil, error: "connection reset")) == "127.0.0.1:4242: connection reset; next try in 0.8 s")
    }

    @Test func backoffDoublesToThirtySecondsAndResetsOnceCaughtUp() {
        var link = machine()
        var delays: [Int] = []
        for _ in 0..<7 {
            _ = link.connect()
            delays.append(retryDelay(link.closed(code: nil, error: "connection refused")) ?? -1)
        }
        #expect(delays == [800, 1_600, 3_200, 6_400, 12_800, 24_000, 24_000])
        _ = link.connect()
        _ = link.opened(now: 0)
        #expect(retryDelay(link.closed(code: nil, error: nil)) == 24_000, "an open socket alone does not reset the backoff")
        _ = link.connect()
        _ = link.opened(now: 0)
        _ = link.caughtUp()
        #expect(retryDelay(link.closed(code: nil, error: nil)) == 800)
    }

    @Test func staleInputsAreIgnored() {
        var link = machine()
        #expect(link.opened(now: 0).isEmpty && link.caughtUp().isEmpty && link.closed(code: nil, error: "x").isEmpty)
        #expect(link.registered().isEmpty)
        #expect(link.tick(now: 0, silentMillis: 99_999).isEmpty)
    }
}
