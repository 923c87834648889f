import ClawlineWire
import RelayCore
import RelayTesting
import Testing

@testable import ClawlineBridge

@Suite struct ClawlineLinkMachineTests: LinkMachineSuite {
    typealias Machine = ClawlineLinkMachine
    static let device = "0f0e8a3c-6a6b-4c1d-9e2f-1a2b3c4d5e6f"

    /// A machine whose jitter is always zero: retries wait 80 % of the backoff step.
    func machine(token: String? = nil, cursor: String? = nil) -> Machine {
        let settings = Machine.Settings(
            endpoint: "127.0.0.1:18800",
            deviceID: Self.device,
            claimedName: "studio",
            accountFile: "/d/accounts/up.clawline.json"
        )
        return Machine(settings: settings, token: token, cursor: cursor) { _ in 0 }
    }

    func authenticated(at clock: TestClock = TestClock(startMillis: 0)) -> Machine {
        var link = machine(token: "jwt", cursor: "s_1")
        _ = link.connect()
        _ = link.opened(now: clock.nowMillis())
        _ = link.received(Array(#"{"type":"auth_result","success":true,"userId":"u"}"#.utf8), now: clock.nowMillis())
        return link
    }

    @Test func pairsOnceThenAuthenticatesOnANewSocket() throws {
        var link = machine()
        #expect(link.connect() == [.report(.connecting, "connecting to 127.0.0.1:18800"), .connect])
        let opened = link.opened(now: 0)
        let request = try #require(sent(opened).first)
        #expect(request["type"] == .string("pair_request") && request["deviceId"] == .string(Self.device))
        #expect(opened.contains(.armTick(afterMillis: 15_000)))
        #expect(reports(opened) == [.awaitingApproval])
        #expect(detail(opened).contains("clawrelay devices approve \(Self.device)"))
        #expect(link.received(.ack(.init(id: "c_1"))).isEmpty, "nothing but pair_result matters while pairing")
        #expect(link.tick(now: 15_000, silentMillis: 0) == [.ping, .armTick(afterMillis: 15_000)], "a pairing has no deadline")

        let paired = link.received(.pairResult(.init(success: true, token: "jwt", userId: "u")))
        #expect(paired.first == .own(.storePairing(token: "jwt", userID: "u")))
        #expect(paired.last == .close(code: 1000, reason: "paired"))
        #expect(detail(paired) == "paired with 127.0.0.1:18800 as device \(Self.device), user u; authenticating")
        #expect(link.tick(now: 30_000, silentMillis: 0).isEmpty, "the paired socket is closing")
        #expect(link.closed(code: 1000, error: nil) == [.cancelTick, .armRetry(afterMillis: 0)])
        #expect(link.connect() == [.report(.connecting, "connecting to 127.0.0.1:18800"), .connect])
        let auth = try #require(sent(link.opened(now: 0)).first)
        #expect(auth["type"] == .string("auth") && auth["token"] == .string("jwt") && auth["lastMessageId"] == nil)
        let up = link.received(.authResult(.init(success: true, userId: "u", replayCount: 2)))
        #expect(up.first == .own(.up(.init(success: true, userId: "u", replayCount: 2))))
        #expect(reports(up) == [.connected] && link.isReady)
        #expect(detail(up) == "127.0.0.1:18800 as device \(Self.device), user u")
    }

    @Test func authCarriesTheCursorAndTheCursorFollowsStoredEvents() throws {
        var link = machine(token: "jwt", cursor: "s_42")
        _ = link.connect()
        let auth = try #require(sent(link.opened(now: 0)).first)
        #expect(auth["lastMessageId"] == .string("s_42"))
        _ = link.received(.authResult(.init(success: true)))
        let stored = ServerFrame.Message(id: "s_43", role: "assistant", content: "hi")
        #expect(link.received(.message(stored)) == [.own(.frame(.message(stored))), .own(.advanceCursor("s_43"))])
        let streaming = ServerFrame.Message(id: "a_1", role: "assistant", content: "h", streaming: true)
        #expect(link.received(.message(streaming)) == [.own(.frame(.message(streaming)))], "a streaming update is no cursor")
        _ = link.closed(code: 1001, error: nil)
        _ = link.connect()
        let again = try #require(sent(link.opened(now: 0)).first)
        #expect(again["lastMessageId"] == .string("s_43"))
    }

    @Test func framesReachTheTurnsOnlyOnceAuthenticated() {
        var link = machine(token: "jwt")
        #expect(link.received(Array(#"{"type":"ack","id":"c_1"}"#.utf8), now: 0).isEmpty, "no socket")
        _ = link.connect()
        _ = link.opened(now: 0)
        #expect(link.received(.ack(.init(id: "c_1"))).isEmpty)
        _ = link.received(.authResult(.init(success: true)))
        #expect(link.received(Array(#"{"type":"ack","id":"c_1"}"#.utf8), now: 1) == [.own(.frame(.ack(.init(id: "c_1"))))])
        #expect(link.received(Array("not json".utf8), now: 2) == [.own(.undecodable(bytes: 8))])
    }

    @Test(arguments: ["pair_denied", "pair_rejected"])
    func aRefusedPairingStopsForGood(_ reason: String) {
        var link = machine()
        _ = link.connect()
        _ = link.opened(now: 0)
        let refused = link.received(.pairResult(.init(success: false, reason: reason)))
        #expect(reports(refused) == [.failed])
        #expect(detail(refused).contains(reason) && detail(refused).contains("restart the relay"))
        #expect(refused.contains(.close(code: 1000, reason: "")) && refused.last == .own(.stopped(detail(refused))))
        #expect(!refused.contains(.own(.down)), "no turn ran on a link that was never up")
        #expect(link.closed(code: 1000, error: nil).isEmpty, "no retry")
        #expect(link.connect().isEmpty)
        #expect(link.phase == .stopped)
    }

    @Test func aPairingTimeoutAsksAgainWithBackoffStillAwaiting() {
        var link = machine()
        _ = link.connect()
        _ = link.opened(now: 0)
        _ = link.received(.pairResult(.init(success: false, reason: "pair_timeout")))
        let closed = link.closed(code: 1000, error: nil)
        #expect(reports(closed) == [.awaitingApproval] && detail(closed).contains("pair_timeout"))
        #expect(detail(closed).hasPrefix("device \(Self.device) (\"studio\") waits for approval on 127.0.0.1:18800"))
        #expect(detail(closed).hasSuffix("; next try in 0.8 s"))
        #expect(retryDelay(closed) == 800)
        #expect(link.connect() == [.connect], "still awaiting approval: no connecting report")
        #expect(sent(link.opened(now: 0)).first?["type"] == .string("pair_request"))
    }

    @Test(arguments: ["auth_failed", "token_revoked", "token_expired"])
    func aRefusedTokenFailsWithoutRetrying(_ reason: String) {
        var link = machine(token: "jwt")
        _ = link.connect()
        _ = link.opened(now: 0)
        let refused = link.received(.authResult(.init(success: false, reason: reason)))
        #expect(reports(refused) == [.failed] && detail(refused).contains(reason))
        #expect(detail(refused).contains("delete /d/accounts/up.clawline.json"))
        #expect(link.closed(code: 1008, error: nil).isEmpty)
    }

    @Test func aDeviceStillPendingAwaitsApprovalAndAsksEvery30Seconds() {
        var link = machine(token: "jwt")
        _ = link.connect()
        _ = link.opened(now: 0)
        #expect(reports(link.received(.authResult(.init(success: false, reason: "device_not_approved")))).isEmpty)
        let closed = link.closed(code: 1008, error: nil)
        #expect(reports(closed) == [.awaitingApproval])
        #expect(detail(closed).contains("device_not_approved") && detail(closed).contains("approve it there"))
        #expect(retryDelay(closed) == 30_000)
        #expect(link.connect() == [.connect], "no connecting report while awaiting approval")
    }

    @Test func revokedOrReplacedWhileReadyFailsAndDropsTheTurns() {
        for code in ["token_revoked", "session_replaced"] {
            var link = authenticated()
            let stopped = link.received(.error(.init(code: code, message: "bye")))
            #expect(stopped.first == .own(.down) && reports(stopped) == [.failed], "\(code)")
            #expect(!stopped.contains(.own(.frame(.error(.init(code: code, message: "bye"))))), "a refusal is not the turns'")
            #expect(link.closed(code: 1008, error: nil).isEmpty)
        }
        var link = authenticated()
        let limited = ServerFrame.error(.init(code: "rate_limited", message: "slow"))
        #expect(link.received(limited) == [.own(.frame(limited))], "only refusals stop the link")
        let failed = ServerFrame.error(.init(code: "server_error", message: "x", messageId: "c_1"))
        #expect(link.received(failed) == [.own(.frame(failed))], "a turn's error is the turns'")
    }

    @Test func dropsRetryWithGrowingBackoffAndResetOnceAuthenticated() {
        var link = authenticated()
        let dropped = link.closed(code: nil, error: "connection reset")
        #expect(dropped.contains(.own(.down)) && reports(dropped) == [.retrying])
        #expect(detail(dropped) == "connection reset; next try in 0.8 s")
        #expect(retryDelay(dropped) == 800)
        _ = link.connect()
        #expect(retryDelay(link.closed(code: nil, error: "refused")) == 1_600)
        _ = link.connect()
        #expect(retryDelay(link.closed(code: nil, error: "refused")) == 3_200)
        _ = link.connect()
        _ = link.opened(now: 0)
        #expect(retryDelay(link.closed(code: 1001, error: nil)) == 6_400, "an open socket alone does not reset the backoff")
        _ = link.connect()
        _ = link.opened(now: 0)
        _ = link.received(.authResult(.init(success: true)))
        let closed = link.closed(code: 1001, error: nil)
        #expect(retryDelay(closed) == 800)
        #expect(detail(closed) == "127.0.0.1:18800 closed the connection (1001); next try in 0.8 s")
    }

    @Test func pingsAndGivesUpOnASilentProvider() {
        let clock = TestClock(startMillis: 0)
        var link = authenticated(at: clock)
        clock.advance(millis: 15_000)
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 15_000) == [.ping, .armTick(afterMillis: 15_000)])
        clock.advance(millis: 15_000)
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 30_000) == [.ping, .armTick(afterMillis: 15_000)])
        clock.advance(millis: 30_000)
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 45_000) == [.close(code: 4000, reason: "")])
        let closed = link.closed(code: nil, error: nil)
        #expect(detail(closed).hasPrefix("127.0.0.1:18800 answered no ping within 45.0 s"))
        #expect(closed.contains(.own(.down)) && closed.contains(.cancelTick))
    }

    @Test func aFrameKeepsASocketWhosePongsAreLate() {
        let clock = TestClock(startMillis: 0)
        var link = authenticated(at: clock)
        clock.advance(millis: 40_000)
        _ = link.received(Array(#"{"type":"typing","active":true}"#.utf8), now: clock.nowMillis())
        clock.advance(millis: 10_000)
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 50_000) == [.ping, .armTick(afterMillis: 15_000)])
    }

    @Test func anUnansweredAuthIsLeft() {
        let clock = TestClock(startMillis: 0)
        var link = machine(token: "jwt")
        _ = link.connect()
        _ = link.opened(now: clock.nowMillis())
        clock.advance(millis: 14_999)
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 0) == [.ping, .armTick(afterMillis: 15_000)])
        clock.advance(millis: 1)
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 0) == [.close(code: 4000, reason: "")])
        let closed = link.closed(code: nil, error: nil)
        #expect(detail(closed) == "127.0.0.1:18800 sent no auth_result within 15.0 s; next try in 0.8 s")
        #expect(!closed.contains(.own(.down)))
    }

    @Test func resyncReconnectsAtOnce() {
        var link = authenticated()
        #expect(link.resync("a turn ended") == [.close(code: 4000, reason: "")])
        let closed = link.closed(code: nil, error: nil)
        #expect(closed.contains(.own(.down)) && retryDelay(closed) == 800 && detail(closed).hasPrefix("a turn ended"))
        var idle = machine()
        #expect(idle.resync("not ready").isEmpty)
    }

    @Test func anErrorWhileAuthenticatingIsRetriedUnlessItRefuses() {
        var link = machine(token: "jwt")
        _ = link.connect()
        _ = link.opened(now: 0)
        #expect(link.received(.error(.init(code: "server_error", message: "busy"))) == [.close(code: 4000, reason: "")])
        #expect(detail(link.closed(code: nil, error: nil)) == "127.0.0.1:18800 answered server_error: busy; next try in 0.8 s")
    }
}
