import RelayCore
import Testing

@testable import DiscoClawBridge

@Suite struct DiscoClawLinkMachineTests {
    typealias Machine = DiscoClawLinkMachine

    /// A machine whose jitter is always zero: retries wait 80 % of the backoff.
    func machine(hasToken: Bool = true) -> Machine { Machine(endpoint: "127.0.0.1:4242", hasToken: hasToken, pingIntervalMillis: 15_000) { _ in 0 } }

    func ready() -> Machine {
        var link = machine()
        _ = link.connect()
        _ = link.opened()
        _ = link.caughtUp()
        return link
    }

    func reports(_ actions: [Machine.Action]) -> [LinkState] {
        actions.compactMap { if case .report(let state, _) = $0 { state } else { nil } }
    }

    func detail(_ actions: [Machine.Action]) -> String? {
        actions.lazy.compactMap { if case .report(_, let detail) = $0 { detail } else { nil } }.first
    }

    func retryDelay(_ actions: [Machine.Action]) -> Int? {
        actions.lazy.compactMap { if case .armRetry(let millis) = $0 { millis } else { nil } }.first
    }

    @Test func connectedOnlyAfterTheCatchUp() {
        var link = machine()
        #expect(link.connect() == [.report(.connecting, "connecting to 127.0.0.1:4242"), .connect])
        #expect(link.opened() == [.armTick(afterMillis: 15_000), .catchUp])
        #expect(!link.isReady && link.state == .connecting)
        #expect(link.caughtUp() == [.report(.connected, "127.0.0.1:4242")])
        #expect(link.isReady)
        #expect(link.caughtUp().isEmpty, "a second catch-up does not report again")
    }

    @Test func aSetupTokenRegistersOnceBeforeConnecting() {
        var link = machine(hasToken: false)
        #expect(link.connect() == [.report(.connecting, "registering with 127.0.0.1:4242"), .register])
        #expect(link.registered() == [.report(.connecting, "registered; connecting to 127.0.0.1:4242"), .connect])
        #expect(link.hasToken)
        _ = link.opened()
        _ = link.caughtUp()
        _ = link.closed(error: nil)
        #expect(link.connect().last == .connect, "reconnects go straight to the socket")
    }

    @Test func aRefusedSetupTokenIsBadCredentialsAtTheLongestBackoff() {
        var link = machine(hasToken: false)
        _ = link.connect()
        let failed = link.registrationFailed("127.0.0.1:4242 refused the setup token (401: Invalid setup token)", refused: true)
        #expect(reports(failed) == [.badCredentials])
        #expect(retryDelay(failed) == 24_000)
        #expect(detail(failed) == "127.0.0.1:4242 refused the setup token (401: Invalid setup token); next try in 24.0 s")
        #expect(link.connect() == [.register], "no flapping to connecting while the credentials are bad")
        let unreachable = link.registrationFailed("connection refused", refused: false)
        #expect(reports(unreachable) == [.retrying])
    }

    @Test func aTokenRefusedAtTheUpgradeIsBadCredentialsWithoutAHotLoop() {
        var link = machine()
        _ = link.connect()
        let refused = link.closed(error: "HS: ws upgrade unauthorized")
        #expect(reports(refused) == [.badCredentials])
        #expect(detail(refused) == "the token was refused by 127.0.0.1:4242 (401); next try in 24.0 s")
        #expect(retryDelay(refused) == 24_000)
        #expect(link.connect() == [.connect])
        #expect(retryDelay(link.closed(error: "HS: ws upgrade unauthorized")) == 24_000, "still the longest wait")
        _ = link.connect()
        _ = link.opened()
        #expect(reports(link.caughtUp()) == [.connected], "a token that works again heals the link")
    }

    @Test func aTokenRefusedOnRESTClosesTheSocketAsBadCredentials() {
        var link = ready()
        #expect(link.tokenRefused() == [.close(code: 4001, reason: "token refused")])
        #expect(reports(link.closed(error: nil)) == [.badCredentials])
        #expect(link.tokenRefused().isEmpty, "nothing to close while waiting")
    }

    @Test func pingsEveryIntervalAndLeavesASilentServer() {
        var link = ready()
        #expect(link.tick(millisSinceLastPong: 100) == [.ping, .armTick(afterMillis: 15_000)])
        #expect(link.tick(millisSinceLastPong: 29_999) == [.ping, .armTick(afterMillis: 15_000)])
        #expect(link.tick(millisSinceLastPong: 30_000) == [.close(code: 4000, reason: "no pong")])
        let closed = link.closed(error: nil)
        #expect(reports(closed) == [.retrying])
        #expect(detail(closed) == "127.0.0.1:4242 answered no ping within 30.0 s; next try in 0.8 s")
        #expect(closed.first == .cancelTick)
    }

    @Test func aFailedCatchUpDropsTheSocketAndRetries() {
        var link = machine()
        _ = link.connect()
        _ = link.opened()
        #expect(link.catchUpFailed("up: /sync failed: 500") == [.close(code: 4000, reason: "sync failed")])
        let closed = link.closed(error: nil)
        #expect(detail(closed) == "up: /sync failed: 500; next try in 0.8 s")
        #expect(!link.isReady)
    }

    @Test func backoffDoublesToThirtySecondsAndResetsOnceCaughtUp() {
        var link = machine()
        var delays: [Int] = []
        for _ in 0..<7 {
            _ = link.connect()
            delays.append(retryDelay(link.closed(error: "connection refused")) ?? -1)
        }
        #expect(delays == [800, 1_600, 3_200, 6_400, 12_800, 24_000, 24_000])
        _ = link.connect()
        _ = link.opened()
        #expect(retryDelay(link.closed(error: nil)) == 24_000, "an open socket alone does not reset the backoff")
        _ = link.connect()
        _ = link.opened()
        _ = link.caughtUp()
        #expect(retryDelay(link.closed(error: nil)) == 800)
    }

    @Test func staleInputsAreIgnored() {
        var link = machine()
        #expect(link.opened().isEmpty && link.caughtUp().isEmpty && link.closed(error: "x").isEmpty)
        #expect(link.registered().isEmpty)
        #expect(link.tick(millisSinceLastPong: 99_999).isEmpty)
    }
}
