import RelayCore
import Testing

@testable import ClawlineBridge

@Suite struct ProviderLinkMachineTests {
    typealias Machine = ProviderLinkMachine
    static let device = "0f0e8a3c-6a6b-4c1d-9e2f-1a2b3c4d5e6f"

    /// A machine whose jitter is always zero: retries wait 80 % of the backoff step.
    func machine(token: String? = nil) -> Machine {
        let settings = Machine.Settings(
            endpoint: "127.0.0.1:18800",
            deviceID: Self.device,
            claimedName: "studio",
            accountFile: "/d/accounts/up.clawline.json"
        )
        return Machine(settings: settings, token: token) { _ in 0 }
    }

    func authenticated() -> Machine {
        var link = machine(token: "jwt")
        _ = link.connect()
        _ = link.opened(cursor: "s_1", now: 0)
        _ = link.received(.authResult(.init(success: true, userID: "u")))
        return link
    }

    func reports(_ actions: [Machine.Action]) -> [LinkState] {
        actions.compactMap { if case .report(let state, _) = $0 { state } else { nil } }
    }

    func detail(_ actions: [Machine.Action]) -> String {
        actions.compactMap { if case .report(_, let detail) = $0 { detail } else { nil } }.last ?? ""
    }

    func sent(_ actions: [Machine.Action]) -> [JSONValue] {
        actions.compactMap { if case .send(let text) = $0 { JSONValue.parse(text) } else { nil } }
    }

    func retryDelay(_ actions: [Machine.Action]) -> Int? {
        actions.lazy.compactMap { if case .armRetry(let millis) = $0 { millis } else { nil } }.first
    }

    @Test func pairsOnceThenAuthenticatesOnANewSocket() throws {
        var link = machine()
        #expect(link.connect() == [.report(.connecting, "connecting to 127.0.0.1:18800"), .connect])
        let opened = link.opened(cursor: nil, now: 0)
        let request = try #require(sent(opened).first)
        #expect(request["type"] == .string("pair_request") && request["deviceId"] == .string(Self.device))
        #expect(reports(opened) == [.awaitingApproval])
        #expect(detail(opened).contains("clawrelay devices approve \(Self.device)"))
        #expect(link.received(.ack(id: "c_1")).isEmpty, "nothing but pair_result matters while pairing")

        let paired = link.received(.pairResult(.init(success: true, token: "jwt", userID: "u")))
        #expect(paired.first == .storePairing(token: "jwt", userID: "u"))
        #expect(paired.last == .close(code: 1000, reason: "paired"))
        #expect(link.closed(code: 1000, error: nil) == [.cancelTick, .armRetry(afterMillis: 0)])
        _ = link.connect()
        let auth = try #require(sent(link.opened(cursor: nil, now: 0)).first)
        #expect(auth["type"] == .string("auth") && auth["token"] == .string("jwt") && auth["lastMessageId"] == nil)
        let up = link.received(.authResult(.init(success: true, userID: "u", replayCount: 2)))
        #expect(up.first == .up(.init(success: true, userID: "u", replayCount: 2)))
        #expect(reports(up) == [.connected] && link.isReady)
    }

    @Test func authCarriesTheCursor() throws {
        var link = machine(token: "jwt")
        _ = link.connect()
        let auth = try #require(sent(link.opened(cursor: "s_42", now: 0)).first)
        #expect(auth["lastMessageId"] == .string("s_42"))
    }

    @Test(arguments: ["pair_denied", "pair_rejected"])
    func aRefusedPairingStopsForGood(_ reason: String) {
        var link = machine()
        _ = link.connect()
        _ = link.opened(cursor: nil, now: 0)
        let refused = link.received(.pairResult(.init(success: false, reason: reason)))
        #expect(reports(refused) == [.failed])
        #expect(detail(refused).contains(reason) && detail(refused).contains("restart the relay"))
        #expect(link.closed(code: 1000, error: nil).isEmpty, "no retry")
        #expect(link.connect().isEmpty)
        #expect(link.phase == .stopped)
    }

    @Test func aPairingTimeoutAsksAgainWithBackoffStillAwaiting() {
        var link = machine()
        _ = link.connect()
        _ = link.opened(cursor: nil, now: 0)
        _ = link.received(.pairResult(.init(success: false, reason: "pair_timeout")))
        let closed = link.closed(code: 1000, error: nil)
        #expect(reports(closed) == [.awaitingApproval] && detail(closed).contains("pair_timeout"))
        #expect(retryDelay(closed) == 800)
        #expect(link.connect() == [.connect], "still awaiting approval: no connecting report")
        #expect(sent(link.opened(cursor: nil, now: 0)).first?["type"] == .string("pair_request"))
    }

    @Test(arguments: ["auth_failed", "token_revoked", "token_expired"])
    func aRefusedTokenFailsWithoutRetrying(_ reason: String) {
        var link = machine(token: "jwt")
        _ = link.connect()
        _ = link.opened(cursor: nil, now: 0)
        let refused = link.received(.authResult(.init(success: false, reason: reason)))
        #expect(reports(refused) == [.failed] && detail(refused).contains(reason))
        #expect(link.closed(code: 1008, error: nil).isEmpty)
    }

    @Test func aDeviceStillPendingAwaitsApprovalAndAsksEvery30Seconds() {
        var link = machine(token: "jwt")
        _ = link.connect()
        _ = link.opened(cursor: nil, now: 0)
        #expect(reports(link.received(.authResult(.init(success: false, reason: "device_not_approved")))).isEmpty)
        let closed = link.closed(code: 1008, error: nil)
        #expect(reports(closed) == [.awaitingApproval])
        #expect(retryDelay(closed) == 30_000)
    }

    @Test func revokedOrReplacedWhileReadyFailsAndDropsTheTurns() {
        for code in ["token_revoked", "session_replaced"] {
            var link = authenticated()
            let stopped = link.received(.error(code: code, message: "bye", messageID: nil))
            #expect(stopped.first == .down && reports(stopped) == [.failed], "\(code)")
            #expect(link.closed(code: 1008, error: nil).isEmpty)
        }
        var link = authenticated()
        #expect(link.received(.error(code: "rate_limited", message: "slow", messageID: nil)).isEmpty, "only refusals stop the link")
        #expect(link.received(.error(code: "server_error", message: "x", messageID: "c_1")).isEmpty, "a turn's error is the turns'")
    }

    @Test func dropsRetryWithGrowingBackoffAndResetOnceAuthenticated() {
        var link = authenticated()
        let dropped = link.closed(code: nil, error: "connection reset")
        #expect(dropped.contains(.down) && reports(dropped) == [.retrying])
        #expect(retryDelay(dropped) == 800)
        _ = link.connect()
        #expect(retryDelay(link.closed(code: nil, error: "refused")) == 1_600)
        _ = link.connect()
        #expect(retryDelay(link.closed(code: nil, error: "refused")) == 3_200)
        _ = link.connect()
        _ = link.opened(cursor: nil, now: 0)
        _ = link.received(.authResult(.init(success: true)))
        #expect(retryDelay(link.closed(code: 1001, error: nil)) == 800)
    }

    @Test func pingsAndGivesUpOnASilentProvider() {
        var link = authenticated()
        #expect(link.tick(now: 15_000, silentMillis: 15_000) == [.ping, .armTick(afterMillis: 15_000)])
        #expect(link.tick(now: 60_000, silentMillis: 45_000) == [.close(code: 4000, reason: "")])
        let closed = link.closed(code: nil, error: nil)
        #expect(detail(closed).hasPrefix("127.0.0.1:18800 answered no ping within 45.0 s"))
    }

    @Test func anUnansweredAuthIsLeft() {
        var link = machine(token: "jwt")
        _ = link.connect()
        _ = link.opened(cursor: nil, now: 0)
        #expect(link.tick(now: 15_000, silentMillis: 0) == [.close(code: 4000, reason: "")])
        #expect(detail(link.closed(code: nil, error: nil)).contains("no auth_result"))
    }

    @Test func resyncReconnectsAtOnce() {
        var link = authenticated()
        #expect(link.resync("a turn ended") == [.close(code: 4000, reason: "")])
        let closed = link.closed(code: nil, error: nil)
        #expect(closed.contains(.down) && retryDelay(closed) == 800 && detail(closed).hasPrefix("a turn ended"))
        var idle = machine()
        #expect(idle.resync("not ready").isEmpty)
    }
}
