import RelayCore
import RelayTesting
import Testing

@testable import GatewayWire

@Suite struct GatewayLinkMachineTests: LinkMachineSuite {
    typealias Machine = GatewayLinkMachine
    static let endpoint = "127.0.0.1:18789"
    static let device = "d3v1ce"

    /// Zero jitter (retries wait 80 % of the step); the "signature" is the signed payload itself,
    /// so a test reads which version was signed.
    func machine(token: String = "", hello: LinkHello = LinkHello(displayName: "clawrelay up"), maxBackoffMillis: Int = 30_000) -> Machine {
        let credentials = Machine.Credentials(deviceID: Self.device, publicKey: "cHVi", token: token) { "sig(\($0))" }
        return Machine(endpoint: Self.endpoint, hello: hello, credentials: credentials, backoff: Backoff(maxMillis: maxBackoffMillis)) { _ in 0 }
    }

    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    func event(_ name: String, _ payload: JSONValue, seq: Int64? = nil) -> [UInt8] {
        bytes(GatewayJSON.encode(GatewayEvent(name, payload, seq: seq)))
    }

    func ok(_ id: String, _ payload: JSONValue) -> [UInt8] { bytes(GatewayJSON.encode(GatewayResponse(id: id, payload: payload))) }

    func challenge(_ nonce: String = "n-1") -> [UInt8] { event("connect.challenge", .object(["nonce": .string(nonce)])) }

    func helloOK(_ id: String, protocol version: Int64 = 4, tickMillis: Int64? = 1_000, deviceToken: String? = nil) -> [UInt8] {
        var payload: [String: JSONValue] = ["type": .string("hello-ok"), "protocol": .int(version)]
        if let tickMillis { payload["policy"] = .object(["tickIntervalMs": .int(tickMillis)]) }
        if let deviceToken { payload["auth"] = .object(["deviceToken": .string(deviceToken)]) }
        return ok(id, .object(payload))
    }

    func refusal(_ id: String, _ error: GatewayError) -> [UInt8] { bytes(GatewayJSON.encode(GatewayResponse<JSONValue>(id: id, error: error))) }

    /// Opens a socket at `now` and answers the challenge; returns the `connect` request.
    func handshake(_ link: inout Machine, now: Int64 = 0, nonce: String = "n-1") throws -> JSONValue {
        _ = link.connect()
        _ = link.opened(now: now)
        return try #require(sent(link.received(challenge(nonce), now: now)).first)
    }

    func ready(_ clock: TestClock = TestClock(startMillis: 0)) throws -> Machine {
        var link = machine()
        let connect = try handshake(&link, now: clock.nowMillis())
        _ = link.received(helloOK(connect["id"]?.stringValue ?? ""), now: clock.nowMillis())
        return link
    }

    @Test func answersTheChallengeWithASignedV3ConnectAndIsConnectedOnHelloOK() throws {
        let clock = TestClock()
        var link = machine()
        #expect(link.connect() == [.report(.connecting, "connecting to 127.0.0.1:18789"), .connect])
        #expect(link.opened(now: clock.nowMillis()) == [.armTick(afterMillis: 15_000)])
        #expect(!link.isReady)
        let connect = try #require(sent(link.received(challenge("n-1"), now: clock.nowMillis())).first)
        #expect(connect["type"] == .string("req") && connect["method"] == .string("connect") && connect["id"] == .string("r1"))
        let params = try #require(connect["params"])
        #expect(params["minProtocol"] == .int(3) && params["maxProtocol"] == .int(4))
        #expect(params["client"]?["id"] == .string("gateway-client") && params["client"]?["mode"] == .string("backend"))
        #expect(params["client"]?["displayName"] == .string("clawrelay up"))
        #expect(params["role"] == .string("operator") && params["scopes"] == .array([.string("operator.read"), .string("operator.write")]))
        #expect(params["auth"] == nil, "no device token yet")
        let device = try #require(params["device"])
        #expect(device["id"] == .string(Self.device) && device["publicKey"] == .string("cHVi") && device["nonce"] == .string("n-1"))
        #expect(device["signedAt"] == .int(clock.nowMillis()), "signed at the time the challenge arrived")
        let fields = DeviceAuth.SignedFields(
            deviceID: Self.device,
            clientID: "gateway-client",
            clientMode: "backend",
            role: "operator",
            scopes: ["operator.read", "operator.write"],
            signedAtMillis: clock.nowMillis(),
            token: "",
            nonce: "n-1",
            platform: "linux",
            deviceFamily: ""
        )
        #expect(device["signature"] == .string("sig(\(DeviceAuth.payloadV3(fields)))"))

        let up = link.received(helloOK("r1", protocol: 4, tickMillis: 2_000, deviceToken: "tok-1"), now: clock.nowMillis())
        #expect(up == [.own(.storeToken("tok-1")), .report(.connected, "127.0.0.1:18789 (protocol 4)"), .armTick(afterMillis: 2_000)])
        #expect(link.isReady && link.protocolVersion == 4 && link.state == .connected)
        #expect(link.received(challenge("n-2"), now: 1).isEmpty, "a second challenge is not answered")
    }

    @Test func aKnownDeviceTokenGoesOutInAuthAndIsSigned() throws {
        var link = machine(token: "tok-0")
        let connect = try handshake(&link)
        #expect(connect["params"]?["auth"] == .object(["token": .string("tok-0")]))
        let signature = connect["params"]?["device"]?["signature"]?.stringValue ?? ""
        #expect(signature.hasPrefix("sig(v3|\(Self.device)|gateway-client|backend|operator|") && signature.contains("|tok-0|n-1|linux|"))
    }

    @Test func theGatewaysPolicyIsFollowedWithinBounds() throws {
        for (policy, tick) in [(Int64?.none, 30_000), (200, 1_000), (5_000, 5_000), (900_000, 600_000)] {
            var link = machine()
            let connect = try handshake(&link)
            let up = link.received(helloOK(connect["id"]?.stringValue ?? "", protocol: 3, tickMillis: policy), now: 0)
            #expect(up.last == .armTick(afterMillis: tick), "policy \(String(describing: policy))")
            #expect(detail(up) == "127.0.0.1:18789 (protocol 3)")
        }
    }

    @Test func aSparseHelloOkStillGivesItsTokenAndVersion() throws {
        var link = machine()
        let connect = try handshake(&link)
        let sparse = ok(connect["id"]?.stringValue ?? "", .object(["protocol": .int(4), "auth": .object(["deviceToken": .string("tok-s")])]))
        let up = link.received(sparse, now: 0)
        #expect(up.first == .own(.storeToken("tok-s")) && up.last == .armTick(afterMillis: 30_000), "no type, no policy: the defaults")
        #expect(link.protocolVersion == 4)
    }

    @Test func aRefusedV3SignatureIsTriedAgainAsV2ThenIsBadCredentials() throws {
        var link = machine()
        let first = try handshake(&link)
        let bad = GatewayError.invalid("device signature invalid", code: "DEVICE_AUTH_SIGNATURE_INVALID")
        let refused = link.received(refusal(first["id"]?.stringValue ?? "", bad), now: 0)
        #expect(refused == [.report(.retrying, "the gateway refused a v3 device signature; trying v2"), .close(code: 1000, reason: "")])
        #expect(link.closed(code: 1000, error: nil) == [.own(.down), .cancelTick, .armRetry(afterMillis: 800)], "reported already")
        #expect(link.connect() == [.report(.connecting, "connecting to 127.0.0.1:18789"), .connect])
        _ = link.opened(now: 0)
        let second = try #require(sent(link.received(challenge("n-2"), now: 0)).first)
        #expect(second["params"]?["device"]?["signature"]?.stringValue?.hasPrefix("sig(v2|\(Self.device)|") == true)
        let again = link.received(refusal(second["id"]?.stringValue ?? "", bad), now: 0)
        #expect(reports(again) == [.badCredentials])
        #expect(detail(again) == "INVALID_REQUEST: device signature invalid DEVICE_AUTH_SIGNATURE_INVALID")
    }

    @Test func anUnpairedDeviceAwaitsApprovalAndAsksAgainQuietly() throws {
        var link = machine()
        let connect = try handshake(&link)
        var details = GatewayError.Details()
        details.requestId = "req-7"
        let unpaired = GatewayError(.notPaired, "pairing required", details: details)
        let waiting = link.received(refusal(connect["id"]?.stringValue ?? "", unpaired), now: 0)
        #expect(
            waiting == [.report(.awaitingApproval, "awaiting approval (requestId req-7, device \(Self.device))"), .close(code: 1000, reason: "")]
        )
        #expect(link.state == .awaitingApproval && !link.isReady)
        let closed = link.closed(code: 1008, error: nil)
        #expect(reports(closed).isEmpty && retryDelay(closed) == 800)
        #expect(link.connect() == [.connect], "awaiting approval stays shown while the link asks again")
        let approved = try #require(sent(link.opened(now: 0) + link.received(challenge(), now: 0)).first)
        #expect(reports(link.received(helloOK(approved["id"]?.stringValue ?? "", deviceToken: "tok-9"), now: 0)) == [.connected])
        #expect(link.credentials.token == "tok-9")
    }

    @Test func aRevokedDeviceStopsAskingKeepsItsTokenAndSaysWhy() throws {
        var link = machine(token: "kept")
        let connect = try handshake(&link)
        let refused = link.received(refusal(connect["id"]?.stringValue ?? "", .pairingRejected(deviceID: Self.device, revoked: true)), now: 0)
        #expect(
            reports(refused) == [.failed] && detail(refused) == "this device was revoked: run clawrelay devices allow \(Self.device) on the relay"
        )
        #expect(refused.last == .close(code: 1000, reason: "") && link.state == .failed && link.credentials.token == "kept")
        #expect(link.closed(code: 1008, error: nil).isEmpty && link.connect().isEmpty, "no retry until a person acts")
    }

    @Test func aRotatedDeviceTokenIsDroppedAndTheLinkPairsAgain() throws {
        var link = machine(token: "stale")
        let connect = try handshake(&link)
        let mismatch = GatewayError.deviceTokenMismatch
        let refused = link.received(refusal(connect["id"]?.stringValue ?? "", mismatch), now: 0)
        #expect(refused.first == .own(.storeToken("")))
        #expect(reports(refused) == [.retrying])
        #expect(
            detail(refused) == "AUTH_DEVICE_TOKEN_MISMATCH: the gateway refused this account's device token; dropped it and connecting again to pair"
        )
        _ = link.closed(code: 1008, error: nil)
        let again = try handshake(&link)
        #expect(again["params"]?["auth"] == nil, "connects on its key alone")
    }

    @Test func aRefusedSharedTokenIsBadCredentials() throws {
        var link = machine()
        let connect = try handshake(&link)
        let refused = link.received(refusal(connect["id"]?.stringValue ?? "", .tokenMismatch(canRetryWithDeviceToken: false)), now: 0)
        #expect(reports(refused) == [.badCredentials])
        #expect(detail(refused) == "INVALID_REQUEST: unauthorized: gateway token mismatch (provide gateway auth token) AUTH_TOKEN_MISMATCH")
        #expect(refused.last == .close(code: 1000, reason: ""))
        #expect(reports(link.closed(code: 1000, error: nil)).isEmpty)
        #expect(link.connect() == [.connect], "bad credentials stay shown while the link retries")
    }

    @Test func requestsAreNumberedAndMatchedToTheirResponsesOnTheirSocket() throws {
        var link = try ready()
        var idle = machine()
        #expect(idle.request("health", NoParams()) == (nil, []) as (String?, [Machine.Action]), "no socket: nothing sent")
        let (id, actions) = link.request("chat.send", ChatSendParams(sessionKey: "main", message: "hi", idempotencyKey: "run-1"))
        #expect(id == "r2")
        let request = try #require(sent(actions).first)
        #expect(request["method"] == .string("chat.send") && request["id"] == .string("r2") && request["params"]?["message"] == .string("hi"))
        let answer = ok("r2", .object(["runId": .string("run-1")]))
        let response = link.received(answer, now: 1)
        #expect(response == [.own(.response(GatewayResponse(id: "r2", payload: .object(["runId": .string("run-1")]))))])
        #expect(link.received(answer, now: 2).isEmpty, "answered once")
        #expect(link.received(ok("r99", .null), now: 3).isEmpty, "nobody asked")

        let (late, _) = link.request("status", NoParams())
        _ = link.closed(code: 1001, error: nil)
        let connect = try handshake(&link)
        _ = link.received(helloOK(connect["id"]?.stringValue ?? ""), now: 0)
        #expect(link.received(ok(late ?? "", .null), now: 4).isEmpty, "a request dies with its socket")
    }

    @Test func eventsAreHandedOver() throws {
        var link = machine()
        _ = link.connect()
        _ = link.opened(now: 0)
        let tick = JSONValue.object(["ts": .int(1)])
        #expect(link.received(event("tick", tick), now: 0) == [.own(.event(GatewayEvent("tick", tick)))])
        var ready = try ready()
        let payload = JSONValue.object(["runId": .string("run-1"), "state": .string("delta")])
        #expect(ready.received(event("chat", payload, seq: 3), now: 0) == [.own(.event(GatewayEvent("chat", payload, seq: 3)))])
        #expect(ready.received(bytes("[1,2]"), now: 0).isEmpty && ready.received(bytes("nope"), now: 0).isEmpty)
    }

    @Test func twoSilentTickIntervalsCloseTheLinkAndItComesBack() throws {
        let clock = TestClock(startMillis: 0)
        var link = try ready(clock)
        clock.advance(millis: 1_000)
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 1_000) == [.ping, .armTick(afterMillis: 1_000)])
        _ = link.received(event("tick", .null), now: clock.nowMillis())
        clock.advance(millis: 1_000)
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 2_000) == [.ping, .armTick(afterMillis: 1_000)], "a tick event 1 s ago")
        clock.advance(millis: 2_000)
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 4_000) == [.close(code: 4000, reason: "tick timeout")])
        let closed = link.closed(code: nil, error: nil)
        #expect(closed.first == .own(.down) && reports(closed) == [.retrying])
        #expect(detail(closed) == "127.0.0.1:18789 answered no ping within 2.0 s; next try in 0.8 s")
        #expect(link.connect().last == .connect)
    }

    @Test func aGatewayThatNeverFinishesTheHandshakeIsLeft() {
        let clock = TestClock(startMillis: 0)
        var link = machine()
        _ = link.connect()
        _ = link.opened(now: clock.nowMillis())
        clock.advance(millis: 15_000)
        #expect(link.tick(now: clock.nowMillis(), silentMillis: 0) == [.close(code: 4000, reason: "handshake timeout")])
        #expect(detail(link.closed(code: nil, error: nil)) == "127.0.0.1:18789 sent no hello-ok within 15.0 s; next try in 0.8 s")
    }

    @Test func retriesBackOffToTheGivenMaximumAndResetOnHelloOK() throws {
        var link = machine(maxBackoffMillis: 3_000)
        var delays: [Int] = []
        for _ in 0..<4 {
            _ = link.connect()
            let failed = link.closed(code: nil, error: "cannot connect to 127.0.0.1:18789")
            #expect(failed.first == .own(.down), "what waited on the try fails")
            delays.append(retryDelay(failed) ?? -1)
        }
        #expect(delays == [800, 1_600, 2_400, 2_400])
        let connect = try handshake(&link)
        _ = link.received(helloOK(connect["id"]?.stringValue ?? ""), now: 0)
        let dropped = link.closed(code: 1012, error: nil)
        #expect(retryDelay(dropped) == 800)
        #expect(detail(dropped) == "127.0.0.1:18789 closed the connection (1012); next try in 0.8 s")
        var high = Machine(
            endpoint: Self.endpoint,
            hello: .operatorClient(displayName: "chat"),
            credentials: Machine.Credentials(deviceID: "d", publicKey: "p", token: "") { $0 },
            backoff: Backoff(maxMillis: 3_000)
        ) { $0 }
        _ = high.connect()
        #expect(retryDelay(high.closed(code: nil, error: "x")) == 1_200, "+20 % at most")
    }

    @Test func aStoppedLinkClosesQuietlyAndStaysDown() throws {
        var link = try ready()
        #expect(link.stop() == [.own(.down), .cancelTick, .close(code: 1000, reason: "")])
        #expect(link.closed(code: 1000, error: nil).isEmpty && link.connect().isEmpty)
        #expect(link.state == .connected, "nothing reported: the owner let it go")
        var connecting = machine()
        _ = connecting.connect()
        _ = connecting.stop()
        #expect(connecting.opened(now: 0) == [.close(code: 1000, reason: "")], "a socket that opens afterwards is closed")
    }

    @Test func aNodeSaysWhatItOffers() throws {
        let hello = LinkHello.node(displayName: "phone via clawrelay", caps: [], commands: ["camera.snap"], permissions: .object([:]))
        var link = machine(hello: hello)
        let params = try #require(try handshake(&link)["params"])
        #expect(params["role"] == .string("node") && params["client"]?["mode"] == .string("node") && params["scopes"] == .array([]))
        #expect(params["commands"] == .array([.string("camera.snap")]))
    }
}
