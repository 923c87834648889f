import RelayCore
import Testing

@testable import CompanionBridge

@Suite struct CompanionLinkMachineTests {
    typealias Machine = CompanionLinkMachine

    /// A machine whose jitter is always zero: retries wait 80 % of the backoff.
    func machine() -> Machine { Machine(endpoint: "127.0.0.1:3001", pingIntervalMillis: 15_000) { _ in 0 } }

    func ready() -> Machine {
        var link = machine()
        _ = link.connect()
        _ = link.opened()
        _ = link.received(.welcome(serverVersion: "1.0.0"))
        return link
    }

    func reports(_ actions: [Machine.Action]) -> [LinkState] {
        actions.compactMap { if case .report(let state, _) = $0 { state } else { nil } }
    }

    func retryDelay(_ actions: [Machine.Action]) -> Int? {
        actions.lazy.compactMap { if case .armRetry(let millis) = $0 { millis } else { nil } }.first
    }

    @Test func connectedOnlyOnceWelcomeArrives() {
        var link = machine()
        #expect(link.connect() == [.report(.connecting, "connecting to 127.0.0.1:3001"), .connect])
        #expect(link.opened() == [.armTick(afterMillis: 15_000)])
        #expect(!link.isReady)
        #expect(link.received(.pong).isEmpty)
        #expect(link.received(.welcome(serverVersion: "1.0.0")) == [.report(.connected, "127.0.0.1:3001, server 1.0.0")])
        #expect(link.isReady)
    }

    @Test func pingsEveryIntervalAndClosesAfterTwoSilentOnes() throws {
        var link = ready()
        let first = link.tick(now: 0)
        #expect(first.count == 2)
        guard case .send(let ping) = first[0] else {
            Issue.record("no ping: \(first)")
            return
        }
        #expect(JSONValue.parse(ping)?["type"] == .string("ping"))
        #expect(first[1] == .armTick(afterMillis: 15_000))
        _ = link.received(.pong)
        #expect(link.tick(now: 15_000).count == 2, "a pong resets the count")
        #expect(link.tick(now: 30_000).count == 2, "one silent interval is tolerated")
        #expect(link.tick(now: 45_000) == [.close(code: 4000, reason: "no pong")])
        let closed = link.closed(code: nil, error: nil)
        #expect(closed.contains(.down))
        guard case .report(.retrying, let detail) = closed.first(where: { if case .report = $0 { true } else { false } }) else {
            Issue.record("no retrying report: \(closed)")
            return
        }
        #expect(detail.hasPrefix("127.0.0.1:3001 answered no ping within 30.0 s"))
    }

    @Test func aServerThatNeverSaysWelcomeIsLeft() {
        var link = machine()
        _ = link.connect()
        _ = link.opened()
        #expect(link.tick(now: 15_000) == [.close(code: 4000, reason: "no welcome")])
        let closed = link.closed(code: nil, error: nil)
        #expect(!closed.contains(.down), "no turn ran on a link that was never ready")
        #expect(reports(closed) == [.retrying])
    }

    @Test func backoffDoublesToThirtySecondsAndResetsOnWelcome() {
        var link = machine()
        var delays: [Int] = []
        for _ in 0..<7 {
            _ = link.connect()
            delays.append(retryDelay(link.closed(code: nil, error: "conn fail")) ?? -1)
        }
        #expect(delays == [800, 1_600, 3_200, 6_400, 12_800, 24_000, 24_000])
        _ = link.connect()
        _ = link.opened()
        _ = link.received(.welcome(serverVersion: nil))
        #expect(retryDelay(link.closed(code: 1001, error: nil)) == 800)
    }

    @Test func jitterStaysWithinTwentyPercent() {
        var link = Machine(endpoint: "h:1") { bound in bound }
        _ = link.connect()
        #expect(retryDelay(link.closed(code: nil, error: "x")) == 1_200)
    }

    @Test func closeCode1008BeforeWelcomeMeansBadCredentials() {
        var link = machine()
        _ = link.connect()
        _ = link.opened()
        let refused = link.closed(code: 1008, error: nil)
        #expect(reports(refused) == [.badCredentials])
        #expect(retryDelay(refused) == 24_000, "a refused token retries slowly")
        #expect(link.state == .badCredentials)
        #expect(link.connect() == [.connect], "the state stays bad_credentials while it retries")
        _ = link.opened()
        #expect(reports(link.received(.welcome(serverVersion: nil))) == [.connected])
    }

    @Test func closeCode1008AfterWelcomeIsAnOrdinaryDrop() {
        var link = ready()
        let dropped = link.closed(code: 1008, error: nil)
        #expect(reports(dropped) == [.retrying])
        #expect(dropped.contains(.down))
    }

    @Test func detailsNameTheEndpointNeverAPath() {
        var link = machine()
        _ = link.connect()
        let actions = link.closed(code: nil, error: "cannot connect to 127.0.0.1:3001")
        for case .report(_, let detail) in actions {
            #expect(!detail.contains("?token"))
            #expect(detail.contains("next try in 0.8 s"))
        }
    }

    @Test func aStaleCloseIsIgnored() {
        var link = machine()
        #expect(link.closed(code: nil, error: "x").isEmpty, "idle: nothing to close")
        _ = link.connect()
        _ = link.closed(code: nil, error: "x")
        #expect(link.closed(code: nil, error: "x").isEmpty, "already waiting to retry")
    }
}
