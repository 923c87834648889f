import Crypto
import RelayCore
import Testing

@testable import GatewayWire

/// The wire model: what it writes byte for byte, how tolerantly it reads, and the error table.
@Suite struct GatewayWireTests {
    @Test(arguments: [("chat", String?.none), ("sessions.changed", #"{"health":2,"presence":7}"#), ("odd \"name\"/", nil)])
    func theHandWrittenEventIsTheCodableEventByteForByte(name: String, stateVersion: String?) throws {
        let payload = ChatEventPayload(
            runId: "r/1",
            sessionKey: "main",
            seq: 3,
            state: "delta",
            message: ChatMessage(id: "s_1", role: "assistant", text: "é \"q\"\n", timestamp: 9)
        )
        let version = stateVersion.flatMap { JSONValue.parse($0) }.flatMap { GatewayJSON.decode(StateVersion.self, from: $0) }
        let fast = GatewayFastFrames.event(name, payloadJSON: GatewayJSON.encode(payload), seq: 41, stateVersionJSON: version.map(GatewayJSON.encode))
        #expect(fast == GatewayJSON.encode(GatewayEvent(name, payload, seq: 41, stateVersion: version)))
    }

    @Test func typedFramesWriteWhatTheProtocolDocumentsWithSortedKeys() {
        let error = GatewayError.pairingRateLimited(retryAfterMillis: 300_000)
        #expect(
            GatewayJSON.encode(GatewayResponse<JSONValue>(id: "7", error: error))
                == #"{"error":{"code":"UNAVAILABLE","details":{"code":"PAIRING_RATE_LIMITED","retryAfterMs":300000},"message":"too many pending pairing requests; try later"},"id":"7","ok":false,"type":"res"}"#
        )
        #expect(GatewayJSON.encode(GatewayResponse(id: "8", payload: JSONValue.null)) == #"{"id":"8","ok":true,"payload":null,"type":"res"}"#)
        #expect(GatewayJSON.encode(GatewayError.tooManyQueued) == #"{"code":"UNAVAILABLE","message":"too many queued messages","retryable":true}"#)
        #expect(GatewayJSON.encode(Shutdown(reason: "relay stopping")) == #"{"reason":"relay stopping","restartExpectedMs":null}"#)
        let presence = PresenceEntry(
            deviceId: "d",
            role: "node",
            scopes: [],
            clientId: "c",
            mode: "node",
            platform: "ios",
            ts: 5,
            version: "1",
            deviceFamily: nil,
            host: "phone"
        )
        #expect(
            GatewayJSON.encode(presence)
                == #"{"clientId":"c","deviceFamily":null,"deviceId":"d","host":"phone","mode":"node","platform":"ios","reason":"connect","role":"node","roles":["node"],"scopes":[],"ts":5,"version":"1"}"#
        )
        let request = GatewayRequest(id: "c1", method: "chat.send", params: ChatSendParams(sessionKey: "main", message: "hi", idempotencyKey: "k"))
        #expect(
            GatewayJSON.encode(request)
                == #"{"id":"c1","method":"chat.send","params":{"idempotencyKey":"k","message":"hi","sessionKey":"main"},"type":"req"}"#
        )
    }

    @Test func aSignedConnectVerifiesAndCarriesOnlyWhatWasGiven() throws {
        let key = Curve25519.Signing.PrivateKey()
        let raw = Array(key.publicKey.rawRepresentation)
        let device = (DeviceAuth.deviceID(forRawKey: raw), Base64URL.encode(raw))
        for (token, v2) in [("", false), ("tok", true)] {
            let params = ConnectParams.signed(
                client: ConnectParams.Client(id: "bench", version: "1", platform: "linux", mode: "cli"),
                role: "operator",
                scopes: ["operator.read", "operator.write"],
                protocols: 3...4,
                token: token,
                device: device,
                signedAt: 1_000,
                nonce: "n",
                signsV2: v2
            ) { DeviceAuth.sign($0, with: key) }
            let json = GatewayJSON.value(params)
            #expect(json["auth"] == (token.isEmpty ? nil : .object(["token": .string(token)])))
            #expect(json["caps"] == nil && json["client"]?["displayName"] == nil, "nothing the caller did not set")
            let read = try #require(GatewayJSON.decode(ConnectParams.self, from: json))
            #expect(read == params)
            let fields = DeviceAuth.SignedFields(
                deviceID: device.0,
                clientID: "bench",
                clientMode: "cli",
                role: "operator",
                scopes: ["operator.read", "operator.write"],
                signedAtMillis: 1_000,
                token: token,
                nonce: "n",
                platform: "linux",
                deviceFamily: ""
            )
            let verified = DeviceAuth.verify(
                fields,
                publicKey: device.1,
                signature: read.device?.signature ?? "",
                expectedNonce: "n",
                nowMillis: 1_000
            )
            #expect((try? verified.get()) == raw)
        }
    }

    @Test func theReaderIsTolerantAsThePeersAre() throws {
        let json = try #require(
            JSONValue.parse(
                #"{"minProtocol":3.0,"maxProtocol":4,"client":"oops","role":7,"scopes":["operator.read",5,"operator.write"],"permissions":null,"caps":[{"a":1}],"device":{"id":"d","signedAt":"12"}}"#
            )
        )
        let params = try #require(GatewayJSON.decode(ConnectParams.self, from: json))
        #expect(params.minProtocol == nil && params.maxProtocol == 4, "versions are JSON integers")
        #expect(params.client == nil && params.role == nil, "a field of the wrong type reads as absent")
        #expect(params.scopes == ["operator.read", "operator.write"], "a list of strings keeps its strings")
        #expect(params.permissions == .null && params.caps == [.object(["a": .int(1)])], "JSON fields take what is there, null included")
        #expect(params.device?.id == "d" && params.device?.signedAt == nil)
        let message = try #require(GatewayJSON.decode(ChatMessage.self, from: .object(["role": .string("user"), "content": .string("plain")])))
        #expect(message.text == "plain", "a bare string is one text block")
        let error = try #require(GatewayJSON.decode(GatewayError.self, from: .object(["code": .string("APPROVAL_NOT_FOUND")])))
        #expect(error.code.rawValue == "APPROVAL_NOT_FOUND" && error.message.isEmpty, "codes the relay does not send are read too")
        #expect(GatewayJSON.decode(BotPairingParams.self, from: .object(["requestedBots": .string("*")]))?.requestedBots == .all)
        #expect(GatewayJSON.decode(BotPairingParams.self, from: .object(["requestedBots": .string("echo")]))?.requestedBots == .named([]))
    }

    @Test func framesAreTakenApartWithoutASocket() throws {
        #expect(GatewayRequest<JSONValue>.decode(Array("nope".utf8)) == .failure(.notJSON))
        #expect(GatewayRequest<JSONValue>.decode(Array(#"{"type":"res","id":"x1"}"#.utf8)) == .failure(.notARequest(id: "x1")))
        let longID = String(repeating: "i", count: 257)
        #expect(GatewayRequest<JSONValue>.decode(Array(#"{"type":"req","id":"\#(longID)"}"#.utf8)) == .failure(.notARequest(id: nil)))
        let request = try GatewayRequest<JSONValue>.decode(Array(#"{"type":"req","id":"1","method":"node.list","params":[1]}"#.utf8)).get()
        #expect(request.method == "node.list" && request.fields.isEmpty, "params that are not an object read as {}")
        let response = try #require(JSONValue.parse(#"{"type":"res","id":"r1","ok":true,"payload":{"runId":"x"}}"#).flatMap(GatewayFrame.init))
        #expect(response == .response(GatewayResponse(id: "r1", payload: .object(["runId": .string("x")]))))
        let event = try #require(JSONValue.parse(#"{"type":"event","event":"tick","payload":{"ts":1},"seq":4}"#).flatMap(GatewayFrame.init))
        #expect(event == .event(GatewayEvent("tick", .object(["ts": .int(1)]), seq: 4)))
        #expect(JSONValue.parse(#"{"type":"hello"}"#).flatMap(GatewayFrame.init) == nil)
    }

    @Test(arguments: [
        #"{"type":"req","id":"1","method":"chat.send","params":{"sessionKey":"main"}}"#, #"{"type":"req","id":"","method":"health"}"#,
        #"{"type":"req","id":"2","method":"x","params":null}"#, #"{"type":"req","id":3,"method":"x"}"#, #"{"type":"req","id":"4"}"#,
        #"{"type":"event","id":"5","method":"x"}"#,
    ])
    func theFastRequestReadingIsTheCodableOne(_ text: String) throws {
        let json = try #require(JSONValue.parse(text))
        let codable = json["type"] == .string("req") ? GatewayJSON.decode(GatewayRequest<JSONValue>.self, from: json) : nil
        #expect((try? GatewayRequest<JSONValue>.decode(Array(text.utf8)).get()) == codable)
    }

    @Test func theErrorTableNamesEachRefusalsCloseCodeAndDetails() {
        #expect(GatewayError.protocolMismatch(clientMin: 1, clientMax: 2, supported: 3...4).closeCode == .protocolError)
        #expect(GatewayError.storeUnavailable.closeCode == .internalError)
        for error in [GatewayError.connectFirst, .deviceIdentityRequired, .deviceTokenMismatch, .pairingRateLimited(retryAfterMillis: 1)] {
            #expect(error.closeCode == .policyViolation)
        }
        #expect(
            GatewayError.deviceIdentityRequired.code == .notPaired && GatewayError.deviceIdentityRequired.detailCode == "DEVICE_IDENTITY_REQUIRED"
        )
        #expect(GatewayError.deviceAuth(.nonceMismatch).detailCode == "DEVICE_AUTH_NONCE_MISMATCH")
        #expect(GatewayError.tokenMismatch(canRetryWithDeviceToken: true).details?.recommendedNextStep == "retry_with_device_token")
        let pairing = GatewayError.pairingRequired(requestID: "r", reason: "scope-upgrade", deviceID: "d", role: "operator", scopes: ["a"])
        #expect(pairing.message == "pairing required: device is asking for more scopes than it was approved for")
        #expect(pairing.details?.requestId == "r" && pairing.details?.reason == "scope-upgrade")
        #expect(
            [GatewayCloseCode.protocolError, .policyViolation, .internalError, .serviceRestart, .tickTimeout].map(\.rawValue) == [
                1002, 1008, 1011, 1012, 4000,
            ]
        )
    }
}
