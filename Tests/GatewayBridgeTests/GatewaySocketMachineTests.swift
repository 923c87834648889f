import Crypto
import GatewayWire
import RelayCore
import Testing

@testable import GatewayBridge

/// One socket's protocol logic alone: frames in, effects out, no socket, core or clock.
@Suite struct GatewaySocketMachineTests {
    typealias Machine = GatewaySocketMachine
    static let now: Int64 = 1_700_000_000_000

    func machine(_ settings: GatewaySettings = GatewaySettings(), peer: String = "10.0.0.2") -> Machine {
        Machine(settings: settings, peerAddress: peer, nonce: "nonce-1", openedAt: Self.now)
    }

    func bytes(_ json: JSONValue) -> [UInt8] { Array(json.encoded().utf8) }

    func request(_ method: String, id: String = "1", _ params: JSONValue = .object([:])) -> [UInt8] {
        bytes(.object(["type": .string("req"), "id": .string(id), "method": .string(method), "params": params]))
    }

    /// A signed connect for a new device, changed by `tamper`.
    func connect(
        _ device: Curve25519.Signing.PrivateKey = Curve25519.Signing.PrivateKey(),
        role: String = "operator",
        scopes: [String] = ["operator.read"],
        token: String = "",
        tamper: (inout ConnectParams) -> Void = { _ in }
    ) -> [UInt8] {
        let raw = Array(device.publicKey.rawRepresentation)
        var params = ConnectParams.signed(
            client: ConnectParams.Client(id: "cli", version: "1", platform: "linux", mode: role == "node" ? "node" : "cli"),
            role: role,
            scopes: scopes,
            protocols: 3...4,
            token: token,
            device: (DeviceAuth.deviceID(forRawKey: raw), Base64URL.encode(raw)),
            signedAt: Self.now,
            nonce: "nonce-1"
        ) { DeviceAuth.sign($0, with: device) }
        tamper(&params)
        return request("connect", id: "c1", GatewayJSON.value(params))
    }

    /// The frames sent, as JSON.
    func sent(_ effects: [Machine.Effect]) -> [JSONValue] {
        effects.compactMap { if case .send(let text) = $0 { JSONValue.parse(text) } else { nil } }
    }

    func closes(_ effects: [Machine.Effect]) -> [Machine.Effect] {
        effects.filter { if case .close = $0 { true } else { false } }
    }

    /// A machine whose peer connected with `scopes` (and `role`).
    func connected(role: String = "operator", scopes: [String]) throws -> Machine {
        var socket = machine()
        let effects = socket.received(connect(role: role, scopes: scopes), now: Self.now)
        guard case .authorize(let attempt)? = effects.last else { throw MachineError("no authorize: \(effects)") }
        #expect(socket.decided(.accepted(token: nil, issuedAt: nil), requestID: attempt.requestID, now: Self.now + 5).count == 1)
        return socket
    }

    struct MachineError: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    @Test func theChallengeGoesOutAndConnectHasTheHandshakeTime() throws {
        var settings = GatewaySettings()
        settings.handshakeTimeoutMillis = 300
        let effects = machine(settings).opened()
        let challenge = try #require(sent(effects).first)
        #expect(
            challenge
                == .object([
                    "type": .string("event"), "event": .string("connect.challenge"),
                    "payload": .object(["nonce": .string("nonce-1"), "ts": .int(Self.now)]),
                ])
        )
        #expect(effects.last == .armHandshakeTimer(afterMillis: 300))
        #expect(machine().handshakeTimedOut().last == .close(.policyViolation, reason: "handshake timeout"))
        #expect(try connected(scopes: []).handshakeTimedOut().isEmpty, "a connected socket has no handshake left")
    }

    @Test func aVerifiedConnectIsDecidedByTheCoreWithWhatItPresented() throws {
        var settings = GatewaySettings()
        settings.sharedToken = "shared"
        var socket = machine(settings)
        let key = Curve25519.Signing.PrivateKey()
        let effects = socket.received(connect(key, scopes: ["operator.write", "operator.read"], token: "shared"), now: Self.now + 60_000)
        #expect(effects.first == .cancelHandshakeTimer)
        guard case .authorize(let attempt)? = effects.last else { throw MachineError("\(effects)") }
        #expect(attempt.requestID == "c1" && attempt.role == "operator" && attempt.scopes == ["operator.write", "operator.read"])
        #expect(attempt.deviceID == DeviceAuth.deviceID(forRawKey: Array(key.publicKey.rawRepresentation)))
        #expect(attempt.credentials == ConnectCredentials(deviceToken: nil, explicitDeviceToken: false, silent: true, sharedTokenConfigured: true))
        #expect(socket.peer?.protocolVersion == 4 && !socket.isConnected, "the highest common version; connected only once the core says so")

        let wrong = machine(settings).credentials(ConnectParams.Auth(token: "guess"))
        #expect(wrong == ConnectCredentials(deviceToken: "guess", explicitDeviceToken: false, silent: false, sharedTokenConfigured: true))
        var loopback = GatewaySettings()
        loopback.autoApproveLoopback = true
        #expect(machine(loopback, peer: "127.0.0.1").credentials(ConnectParams.Auth()).silent)
        #expect(!machine(loopback, peer: "10.0.0.2").credentials(ConnectParams.Auth()).silent)
        loopback.password = "pw"
        #expect(machine(loopback, peer: "10.0.0.2").credentials(ConnectParams.Auth(password: "pw")).silent)
    }

    @Test(arguments: [
        ("no protocol", "minProtocol and maxProtocol are required integers", GatewayCloseCode.policyViolation),
        ("too large", "client.displayName is too large", .policyViolation),
        ("no common version", "protocol mismatch", .protocolError),
        ("no mode", "client needs id, version, platform and a known mode", .policyViolation),
        ("bad role", "invalid role", .policyViolation),
        ("no device", "device identity required", .policyViolation),
        ("no signature", "device needs id, publicKey, signature, signedAt and nonce", .policyViolation),
        ("wrong nonce", "device nonce mismatch", .policyViolation),
    ])
    func aConnectThatFailsItsChecksIsRefusedAndClosed(change: String, message: String, close: GatewayCloseCode) throws {
        var socket = machine()
        let frame = connect { params in
            switch change {
            case "no protocol": params.minProtocol = nil
            case "too large": params.client?.displayName = String(repeating: "x", count: 300)
            case "no common version": (params.minProtocol, params.maxProtocol) = (1, 2)
            case "no mode": params.client?.mode = "robot"
            case "bad role": params.role = "admin"
            case "no device": params.device = nil
            case "no signature": params.device?.signature = nil
            default: params.device?.nonce = "other"
            }
        }
        let effects = socket.received(frame, now: Self.now)
        let answer = try #require(sent(effects).first)
        #expect(answer["id"] == .string("c1") && answer["ok"] == .bool(false) && answer["error"]?["message"] == .string(message))
        #expect(effects.last == .close(close, reason: answer["error"]?["code"]?.stringValue ?? ""))
        #expect(socket.peer == nil)
    }

    @Test func aProtocolMismatchSaysWhichVersionsTheRelaySpeaks() throws {
        var settings = GatewaySettings()
        settings.maxProtocol = 3
        var socket = machine(settings)
        let answer = try #require(sent(socket.received(connect { ($0.minProtocol, $0.maxProtocol) = (4, 4) }, now: Self.now)).first)
        let details = try #require(answer["error"]?["details"])
        #expect(
            details
                == .object([
                    "code": .string("PROTOCOL_MISMATCH"), "clientMinProtocol": .int(4), "clientMaxProtocol": .int(4), "expectedProtocol": .int(3),
                    "minProtocol": .int(3), "maxProtocol": .int(3), "minimumProbeProtocol": .int(3),
                ])
        )
    }

    @Test(arguments: [(Int64(3), Int64(4), Int64?(4)), (3, 3, 3), (4, 9, 4), (2, 3, 3), (1, 2, nil), (5, 9, nil)])
    func theHighestCommonVersionIsAgreed(minimum: Int64, maximum: Int64, agreed: Int64?) {
        #expect(machine().negotiate(minimum: minimum, maximum: maximum) == agreed)
        var pinned = GatewaySettings()
        pinned.maxProtocol = 3
        #expect(machine(pinned).negotiate(minimum: minimum, maximum: maximum) == agreed.flatMap { min($0, 3) >= minimum ? min($0, 3) : nil })
    }

    @Test func beforeConnectOnlyTheSeedsExtrasAreAnswered() {
        var socket = machine()
        #expect(socket.received(request("gateway.discover"), now: Self.now).count == 1)
        #expect(socket.received(request("device.pair"), now: Self.now).count == 1)
        let refused = socket.received(request("node.list"), now: Self.now)
        #expect(sent(refused).first?["error"]?["message"] == .string("the first request must be connect"))
        #expect(refused.last == .close(.policyViolation, reason: "INVALID_REQUEST"))
    }

    @Test func framesThatAreNotRequestsAreAnsweredTheSameWayInEveryState() throws {
        for var socket in [machine(), try connected(scopes: ["operator.read"])] {
            let before = !socket.isConnected
            let notJSON = socket.received(Array("not json".utf8), now: Self.now)
            #expect(sent(notJSON).first?["event"] == .string("error") && notJSON.last == .close(.policyViolation, reason: "invalid frame"))
            let withID = socket.received(bytes(.object(["type": .string("nope"), "id": .string("x1")])), now: Self.now)
            #expect(sent(withID).first?["id"] == .string("x1") && sent(withID).first?["error"]?["code"] == .string("INVALID_REQUEST"))
            #expect(closes(withID).isEmpty != before, "JSON that is not a request closes only before connect")
            let anonymous = socket.received(bytes(.array([])), now: Self.now)
            #expect(sent(anonymous).first?["event"] == .string("error"))
        }
    }

    @Test func whatTheCoreDecidedIsAnsweredAndARefusalCloses() throws {
        var socket = machine()
        let attempt = socket.received(connect(), now: Self.now)
        #expect(attempt.count == 2)
        var refused = socket
        let mismatch = refused.decided(.deviceTokenMismatch, requestID: "c1", now: Self.now)
        #expect(sent(mismatch).first?["error"]?["details"]?["code"] == .string("AUTH_DEVICE_TOKEN_MISMATCH"))
        #expect(mismatch.last == .close(.policyViolation, reason: "INVALID_REQUEST"))
        #expect(
            refused.decided(.pairingRequired(reason: "role-upgrade"), requestID: "c1", now: Self.now) == [
                .requirePairing(requestID: "c1", reason: "role-upgrade")
            ]
        )
        #expect(
            socket.decided(.accepted(token: "t", issuedAt: 5), requestID: "c1", now: Self.now + 9) == [
                .connected(requestID: "c1", deviceToken: "t", issuedAt: 5)
            ]
        )
        #expect(socket.isConnected && socket.peer?.connectedAt == Self.now + 9)
        let late = socket.decided(.accepted(token: nil, issuedAt: nil), requestID: "c2", now: Self.now)
        #expect(sent(late).first?["error"]?["message"] == .string("already connected") && closes(late).isEmpty)
        #expect(socket.refusedConnect("c3", .storeUnavailable).last == .close(.internalError, reason: "UNAVAILABLE"))
    }

    @Test(arguments: [
        // (role, scopes, method, refusal or nil when allowed)
        ("operator", ["operator.read"], "chat.history", String?.none),
        ("operator", ["operator.read"], "chat.send", "missing scope: operator.write"),
        ("operator", ["operator.write"], "chat.history", nil),
        ("operator", ["operator.admin"], "device.pair.list", nil),
        ("operator", ["operator.read"], "device.pair.list", "missing scope: operator.pairing"),
        ("operator", ["operator.pairing"], "sessions.list", "missing scope: operator.read"),
        ("operator", ["operator.read"], "sessions.patch", "missing scope: operator.write"),
        ("operator", ["operator.pairing"], "health", "missing scope: operator.read"),
        ("node", [], "health", "unauthorized role: node"),
        ("node", [], "chat.history", "missing scope: operator.read"),
        ("node", [], "node.describe", nil),
        ("node", [], "node.event", nil),
        ("operator", ["operator.admin"], "node.invoke.result", "only nodes report invoke results"),
        ("operator", ["operator.admin"], "node.event", "only nodes send node.event"),
        ("operator", ["operator.read"], "node.invoke", "missing scope: operator.write"),
        ("operator", [], "device.unpair", nil),
        ("operator", ["operator.admin"], "connect", "already connected"),
        ("operator", ["operator.admin"], "agents.list", nil),
        ("node", [], "agent.identity.get", "unauthorized role: node"),
        ("operator", ["operator.admin"], "agents.create", "unknown method agents.create"),
        ("operator", ["operator.approvals"], "exec.approval.resolve", nil),
        ("operator", ["operator.admin"], "plugin.approval.list", nil),
        ("operator", ["operator.read", "operator.write"], "exec.approval.list", "missing scope: operator.approvals"),
        ("node", ["operator.approvals"], "exec.approval.get", "unauthorized role: node"),
        ("node", [], "node.pending.pull", nil),
        ("operator", ["operator.admin"], "node.pending.drain", "only nodes have pending work"),
        ("operator", ["operator.read"], "agent.wait", nil),
        ("node", [], "commands.list", "unauthorized role: node"),
        ("operator", ["operator.write"], "chat.inject", "missing scope: operator.admin"),
        ("node", [], "chat.inject", "unauthorized role: node"),
    ])
    func aConnectedPeerMayCallWhatItsRoleAndScopesAllow(role: String, scopes: [String], method: String, refusal: String?) throws {
        var socket = try connected(role: role, scopes: scopes)
        let effects = socket.received(request(method, id: "m1"), now: Self.now)
        if let refusal {
            #expect(sent(effects).first?["error"]?["message"] == .string(refusal) && closes(effects).isEmpty)
        } else {
            guard case .call(let call)? = effects.first else { throw MachineError("\(effects)") }
            #expect(call.method == method && call.id == "m1")
        }
    }

    @Test func everyMethodIsListedOnceAndTheListIsWhatHelloOkOffers() {
        let names = Machine.methods.map(\.name)
        #expect(Set(names).count == names.count && names.first == "connect" && names.count == 47)
        #expect(Machine.access["node.describe"] == .anyone)
    }

    @Test func eventsAreNumberedPerSocket() throws {
        var socket = try connected(scopes: ["operator.read"])
        let first = try #require(JSONValue.parse(socket.numbered("tick", payloadJSON: #"{"ts":1}"#)))
        let second = try #require(JSONValue.parse(socket.numbered("presence", payloadJSON: "{}", stateVersion: #"{"health":1,"presence":2}"#)))
        #expect(first["seq"] == .int(1) && second["seq"] == .int(2) && socket.eventSeq == 2)
        #expect(second["stateVersion"]?["presence"] == .int(2))
    }
}
