import CompanionWire
import RelayCore
import RelayTesting
import Testing

@testable import CompanionBridge

@Suite struct CompanionLinkMachineTests: LinkMachineSuite {
    typealias Machine = CompanionLinkMachine

    /// A machine whose jitter is always zero: retries wait 80 % of the backoff.
    func machine() -> Machine { Machine(endpoint: "127.0.0.1:3001", pingIntervalMillis: 15_000) { _ in 0 } }

    func ready(at clock: TestClock = TestClock(startMillis: 0)) -> Machine {
        var link = machine()
        _ = link.connect()
        _ = link.opened(now: clock.nowMillis())
        _ = link.received(Array(#"{"type":"welcome","data":{"serverVersion":"1.0.0"}}"#.utf8), now: clock.nowMillis())
        return link
    }

    @Test func connectedOnlyOnceWelcomeArrives() {
        var link = machine()
        #expect(link.connect() == [.report(.connecting, "connecting to 127.0.0.1:3001"), .connect])
        #expect(link.opened(now: 0) == [.armTick(afterMillis: 15_000)])
        #expect(!link.isReady)
        #expect(link.received(.pong).isEmpty)
        #expect(link.received(.welcome(serverVersion: "1.0.0")) == [.report(.connected, "127.0.0.1:3001, server 1.0.0")])
        #expect(link.isReady)
        #expect(link.received(.pong) == [.own(.frame(.pong))], "a ready link's frames go to the turns")
        #expect(link.received(Array("garbage".utf8), now: 1) == [.own(.frame(.other(type: "")))])
    }

    @Test func pingsEveryIntervalAndClosesAfterTwoSilentOnes() throws {
        let clock = TestClock(startMillis: 0)
        var link = ready(at: clock)
        let first = link.tick(now: clock.nowMillis(), silentMillis: 0)
        #expect(first.count == 3)
        #expect(first[0] == .own(.tick(0)), "the turns expire on every tick")
        guard case .send(let ping) = first[1] else {
            Issue.record("no ping: \(first)")
            return
        }
        let frame = try #require(JSONValue.parse(ping))
        #expect(frame["type"] == .string("ping") && frame["requestId"] == .string("ping-1"))
        #expect(first[2] == .armTick(afterMillis: 15_000))
        clock.advance(millis: 1)
        _ = link.received(Array(#"{"type":"pong"}"#.utf8), now: clock.nowMillis())
        clock.advance(millis: 14_999)
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 15_000).count == 3, "a pong resets the count")
        clock.advance(millis: 15_000)
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 30_000).count == 3, "one silent interval is tolerated")
        clock.advance(millis: 15_000)
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 45_000) == [.own(.tick(45_000)), .close(code: 4000, reason: "no pong")])
        let closed = link.closed(code: nil, error: nil)
        #expect(closed.contains(.own(.down)))
        #expect(reports(closed) == [.retrying])
        #expect(detail(closed).hasPrefix("127.0.0.1:3001 answered no ping within 30.0 s"))
    }

    @Test func aServerThatNeverSaysWelcomeIsLeft() {
        let clock = TestClock(startMillis: 0)
        var link = machine()
        _ = link.connect()
        _ = link.opened(now: clock.nowMillis())
        clock.advance(millis: 15_000)
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 15_000) == [.own(.tick(15_000)), .close(code: 4000, reason: "no welcome")])
        let closed = link.closed(code: nil, error: nil)
        #expect(!closed.contains(.own(.down)), "no turn ran on a link that was never ready")
        #expect(reports(closed) == [.retrying])
        #expect(detail(closed) == "127.0.0.1:3001 sent no welcome within 15.0 s; next try in 0.8 s")
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
        _ = link.opened(now: 0)
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
        _ = link.opened(now: 0)
        let refused = link.closed(code: 1008, error: nil)
        #expect(reports(refused) == [.badCredentials])
        #expect(detail(refused) == "127.0.0.1:3001 refused the token (close 1008); next try in 24.0 s")
        #expect(retryDelay(refused) == 24_000, "a refused token retries slowly")
        #expect(link.state == .badCredentials)
        #expect(link.connect() == [.connect], "the state stays bad_credentials while it retries")
        _ = link.opened(now: 0)
        #expect(reports(link.received(.welcome(serverVersion: nil))) == [.connected])
    }

    @Test func closeCode1008AfterWelcomeIsAnOrdinaryDrop() {
        var link = ready()
        let dropped = link.closed(code: 1008, error: nil)
        #expect(reports(dropped) == [.retrying])
        #expect(detail(dropped) == "127.0.0.1:3001 closed the connection (1008); next try in 0.8 s")
        #expect(dropped.contains(.own(.down)))
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
        #expect(link.tick(now: 0, silentMillis: 0).isEmpty, "no socket: no tick")
        _ = link.connect()
        _ = link.closed(code: nil, error: "x")
        #expect(link.closed(code: nil, error: "x").isEmpty, "already waiting to retry")
        #expect(link.opened(now: 0).isEmpty, "a socket nobody asked for")
    }
}
