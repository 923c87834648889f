import GatewayWire
import RelayCore
import RelayTesting
import Testing

@testable import GatewayBridge

/// The handshake in memory: challenge, signed connect, pairing, device tokens per role, and
/// what each refusal sends and how the socket closes.
@Suite struct GatewayConnectTests {
    @Test func anUnknownDeviceIsNotPairedUntilApprovedThenGetsItsToken() throws {
        let bed = GatewayTestbed()
        let client = try bed.open()
        #expect(client.challenge.nonce.count >= 16 && client.challenge.ts == bed.bed.clock.nowMillis())
        let device = TestDevice()
        let refused = try client.connect(device)
        #expect(refused["ok"] == .bool(false) && refused["error"]?["code"] == .string("NOT_PAIRED"), "\(refused)")
        let details = try #require(refused["error"]?["details"])
        #expect(details["code"] == .string("PAIRING_REQUIRED") && details["reason"] == .string("not-paired") && details["requestId"] != nil)
        #expect(client.closeCode == 1008)
        #expect(bed.bed.journal.pendingPairings["gateway|\(device.deviceID)"] != nil, "mirrored for the CLI")

        bed.approve(device)
        let again = try bed.open()
        let hello = try #require(try again.connect(device)["payload"])
        #expect(hello["type"] == .string("hello-ok") && hello["protocol"] == .int(3))
        #expect(hello["auth"]?["role"] == .string("operator") && hello["auth"]?["scopes"] == .array([.string("operator.admin")]))
        let token = try #require(hello["auth"]?["deviceToken"]?.stringValue)
        #expect(hello["auth"]?["issuedAtMs"]?.intValue != nil)

        let withToken = try bed.open()
        device.token = token
        #expect(try withToken.connect(device)["payload"]?["auth"]?["deviceToken"] == .string(token), "the token presented comes back")
        let wrong = try bed.open()
        var options = ConnectOptions()
        options.token = "not-the-token"
        let mismatch = try wrong.connect(device, options)
        #expect(mismatch["error"]?["details"]?["code"] == .string("AUTH_DEVICE_TOKEN_MISMATCH") && wrong.closeCode == 1008)
    }

    @Test func anOperatorApprovesANodeThroughTheProtocol() throws {
        let bed = GatewayTestbed()
        let (operatorClient, _) = try bed.paired(TestDevice())
        let node = TestDevice()
        let asking = try bed.open()
        let requestID = try #require(try asking.connect(node, .node())["error"]?["details"]?["requestId"]?.stringValue)
        let requested = try #require(operatorClient.events("device.pair.requested").first?["payload"])
        #expect(requested["requestId"] == .string(requestID) && requested["deviceId"] == .string(node.deviceID))
        #expect(requested["role"] == .string("node") && requested["displayName"] == .null && requested["remoteIp"] == .string("127.0.0.1"))
        let listing = try #require(operatorClient.request("device.pair.list"))
        #expect(listing["payload"]?["pending"]?.arrayValue?.contains { $0["requestId"] == .string(requestID) } == true, "\(listing)")
        let approved = try #require(operatorClient.request("device.pair.approve", .object(["requestId": .string(requestID)])))
        #expect(approved["payload"]?["decision"] == .string("approved") && approved["payload"]?["deviceId"] == .string(node.deviceID))
        #expect(operatorClient.events("device.pair.resolved").first?["payload"]?["decision"] == .string("approved"))
        let connected = try bed.open().connect(node, .node())
        #expect(connected["ok"] == .bool(true) && connected["payload"]?["auth"]?["role"] == .string("node"))
        let unknown = try #require(operatorClient.request("device.pair.reject", .object(["requestId": .string("nope")])))
        #expect(unknown["error"]?["message"] == .string("unknown requestId"))
    }

    @Test(arguments: ["bad signature", "wrong nonce", "stale", "wrong id"])
    func aDeviceSignatureThatDoesNotHoldIsRefusedAndCloses1008(_ failure: String) throws {
        let bed = GatewayTestbed()
        let client = try bed.open()
        var options = ConnectOptions()
        switch failure {
        case "bad signature": options.tamper = { $0.device?.signature = DeviceAuth.sign("something else", with: TestDevice().key) }
        case "wrong nonce": options.nonce = "not-the-challenge"
        case "stale": options.signedAt = bed.bed.clock.nowMillis() - 5 * 60 * 1000
        default: options.tamper = { $0.device?.id = String(repeating: "0", count: 64) }
        }
        let expected = [
            "bad signature": "DEVICE_AUTH_SIGNATURE_INVALID", "wrong nonce": "DEVICE_AUTH_NONCE_MISMATCH", "stale": "DEVICE_AUTH_SIGNATURE_EXPIRED",
            "wrong id": "DEVICE_AUTH_DEVICE_ID_MISMATCH",
        ][failure]
        let answer = try client.connect(TestDevice(), options)
        #expect(answer["error"]?["code"] == .string("INVALID_REQUEST") && answer["error"]?["details"]?["code"] == expected.map(JSONValue.string))
        #expect(client.closeCode == 1008)
    }

    @Test func aRangeWithoutACommonVersionIsAProtocolMismatchClosing1002() throws {
        let bed = GatewayTestbed()
        let client = try bed.open()
        var options = ConnectOptions()
        options.protocols = 1...2
        let details = try #require(try client.connect(TestDevice(), options)["error"]?["details"])
        #expect(details["code"] == .string("PROTOCOL_MISMATCH") && details["expectedProtocol"] == .int(4))
        #expect(details["minProtocol"] == .int(3) && details["maxProtocol"] == .int(4) && details["clientMaxProtocol"] == .int(2))
        #expect(client.closeCode == 1002)

        var pinned = GatewaySettings()
        pinned.maxProtocol = 3
        let pinnedBed = GatewayTestbed(settings: pinned)
        var both = ConnectOptions()
        both.protocols = 3...4
        #expect(try pinnedBed.paired(TestDevice(), both).1["payload"]?["protocol"] == .int(3), "a gateway pinned to 3 agrees on 3")
        let ios = try pinnedBed.open()
        let refused = try ios.connect(TestDevice(), .openClawKitIOS)
        #expect(refused["error"]?["message"] == .string("protocol mismatch") && refused["error"]?["details"]?["clientMinProtocol"] == .int(4))
        #expect(ios.closeCode == 1002)
    }

    @Test(arguments: [(Int64(3), Int64(4), Int64(4)), (3, 3, 3), (4, 9, 4), (2, 3, 3)])
    func theHighestCommonVersionIsAgreed(minimum: Int64, maximum: Int64, agreed: Int64) throws {
        var options = ConnectOptions()
        options.protocols = minimum...maximum
        #expect(try GatewayTestbed().paired(TestDevice(), options).1["payload"]?["protocol"] == .int(agreed))
    }

    @Test func aConnectWithoutADeviceIsNotPairedAndOneWithoutVersionsIsInvalid() throws {
        let bed = GatewayTestbed()
        var noDevice = ConnectOptions()
        noDevice.tamper = { $0.device = nil }
        let client = try bed.open()
        let answer = try client.connect(TestDevice(), noDevice)
        #expect(answer["error"]?["code"] == .string("NOT_PAIRED") && answer["error"]?["message"]?.stringValue?.contains("identity") == true)
        #expect(client.closeCode == 1008)
        var noVersions = ConnectOptions()
        noVersions.tamper = { $0.minProtocol = nil }
        let other = try bed.open()
        #expect(try other.connect(TestDevice(), noVersions)["error"]?["code"] == .string("INVALID_REQUEST") && other.closeCode == 1008)
        var huge = ConnectOptions()
        huge.tamper = { $0.client?.displayName = String(repeating: "x", count: 30_000) }
        let third = try bed.open()
        #expect(try third.connect(TestDevice(), huge)["error"]?["message"] == .string("client.displayName is too large") && third.closeCode == 1008)
    }

    @Test func theFirstRequestMustBeConnectAndComeInTime() throws {
        var settings = GatewaySettings()
        settings.handshakeTimeoutMillis = 300
        let bed = GatewayTestbed(settings: settings)
        let early = try bed.open()
        let answer = try #require(early.request("node.list"))
        #expect(answer["ok"] == .bool(false) && answer["error"]?["code"] == .string("INVALID_REQUEST") && early.closeCode == 1008)

        let silent = try bed.open()
        bed.bed.advance(millis: 299)
        #expect(silent.closeCode == nil)
        bed.bed.advance(millis: 1)
        #expect(silent.events("error").first?["payload"]?["code"] == .string("INVALID_REQUEST"))
        #expect(silent.socket.closeFrame?.code == 1008 && silent.socket.closeFrame?.reason == "handshake timeout")
        let (connected, _) = try bed.paired(TestDevice())
        bed.bed.advance(millis: 1_000)
        #expect(connected.closeCode == nil, "a connected socket has no handshake deadline")
    }

    @Test func tokensArePerDeviceAndRoleAndNeverRotatedBehindADevicesBack() throws {
        let bed = GatewayTestbed()
        let device = TestDevice()
        var readWrite = ConnectOptions.openClawKitIOS
        readWrite.scopes = ["operator.read", "operator.write"]
        let (_, hello) = try bed.paired(device, readWrite)
        let operatorToken = try #require(hello["payload"]?["auth"]?["deviceToken"]?.stringValue)
        var tokenless = readWrite
        tokenless.token = ""
        let onKey = try bed.open().connect(device, tokenless)
        #expect(onKey["ok"] == .bool(true) && onKey["payload"]?["auth"]?["deviceToken"] == nil, "nothing is rotated for a device on its key")
        #expect(try bed.open().connect(device, readWrite)["ok"] == .bool(true), "the token still works")

        var stale = ConnectOptions.scopes(["operator.read", "operator.write"])
        stale.auth = ConnectParams.Auth(deviceToken: "stale")
        let refused = try #require(try bed.open().connect(device, stale)["error"])
        #expect(
            refused["details"]?["code"] == .string("AUTH_DEVICE_TOKEN_MISMATCH") && refused["details"]?["canRetryWithDeviceToken"] == .bool(false)
        )
        #expect(refused["message"]?.stringValue?.isEmpty == false)

        var asNode = ConnectOptions.node([])
        asNode.token = ""
        asNode.protocols = 4...4
        let upgrade = try bed.open().connect(device, asNode)
        #expect(upgrade["error"]?["details"]?["reason"] == .string("role-upgrade"), "\(upgrade)")
        bed.approve(device)
        let node = try bed.open().connect(device, asNode)
        let nodeToken = try #require(node["payload"]?["auth"]?["deviceToken"]?.stringValue)
        #expect(nodeToken != operatorToken)
        var operatorAgain = ConnectOptions.scopes(["operator.read", "operator.write"])
        operatorAgain.token = operatorToken
        #expect(try bed.open().connect(device, operatorAgain)["ok"] == .bool(true), "the operator token is untouched")
        operatorAgain.token = nodeToken
        #expect(try bed.open().connect(device, operatorAgain)["error"]?["details"]?["code"] == .string("AUTH_DEVICE_TOKEN_MISMATCH"))
    }

    @Test func rotatingAndRevokingATokenClosesTheRolesSockets() throws {
        let bed = GatewayTestbed()
        let (admin, _) = try bed.paired(TestDevice())
        let member = TestDevice()
        let scopes = ConnectOptions.scopes(["operator.read", "operator.pairing"])
        let (first, hello) = try bed.paired(member, scopes)
        let old = try #require(hello["payload"]?["auth"]?["deviceToken"]?.stringValue)
        first.socket.close()
        let own = try bed.open()
        #expect(try own.connect(member, scopes)["ok"] == .bool(true))
        let rotated = try #require(own.request("device.token.rotate", .object(["deviceId": .string(member.deviceID), "role": .string("operator")])))
        let shown = try #require(rotated["payload"]?["token"]?.stringValue, "a device rotating its own token, signed in with it, is shown it")
        #expect(shown != old && rotated["payload"]?["role"] == .string("operator") && own.closeCode == 1008)
        let byAdmin = try #require(
            admin.request("device.token.rotate", .object(["deviceId": .string(member.deviceID), "role": .string("operator")]))
        )
        #expect(byAdmin["ok"] == .bool(true) && byAdmin["payload"]?["token"] == nil, "someone else's token is not shown")
        for stale in [old, shown] {
            var options = scopes
            options.token = stale
            let error = try bed.open().connect(member, options)["error"]
            #expect(
                error?["details"]?["code"] == .string("AUTH_DEVICE_TOKEN_MISMATCH")
                    && error?["details"]?["recommendedNextStep"] == .string("update_auth_credentials")
            )
        }
        var onKey = scopes
        onKey.token = ""
        let fresh = try bed.open()
        let accepted = try fresh.connect(member, onKey)
        #expect(accepted["ok"] == .bool(true) && accepted["payload"]?["auth"]?["deviceToken"] == nil)
        let revoked = try #require(
            admin.request("device.token.revoke", .object(["deviceId": .string(member.deviceID), "role": .string("operator")]))
        )
        #expect(revoked["ok"] == .bool(true) && revoked["payload"]?["role"] == .string("operator") && fresh.closeCode == 1008)
        let (pairer, _) = try bed.paired(TestDevice(), .scopes(["operator.pairing"]))
        let denied = pairer.request("device.token.rotate", .object(["deviceId": .string(member.deviceID), "role": .string("operator")]))
        #expect(denied?["error"]?["message"] == .string("device token change denied"), "non-admins manage only their own device")
    }

    @Test func aSharedTokenAndLoopbackApprovalAreOptIn() throws {
        var shared = GatewaySettings()
        shared.sharedToken = "s3cret-shared"
        let bed = GatewayTestbed(settings: shared)
        var withSecret = ConnectOptions()
        withSecret.token = "s3cret-shared"
        #expect(try bed.open().connect(TestDevice(), withSecret)["ok"] == .bool(true), "the shared token pairs a new device at once")
        var guess = ConnectOptions()
        guess.token = "guess"
        let other = try bed.open()
        let details = try #require(try other.connect(TestDevice(), guess)["error"]?["details"])
        #expect(details["code"] == .string("AUTH_TOKEN_MISMATCH") && details["canRetryWithDeviceToken"] == .bool(true))
        #expect(details["recommendedNextStep"] == .string("retry_with_device_token") && other.closeCode == 1008)

        var loopback = GatewaySettings()
        loopback.autoApproveLoopback = true
        let local = GatewayTestbed(settings: loopback)
        #expect(try local.open().connect(TestDevice())["ok"] == .bool(true))
        #expect(try local.open(peerAddress: "10.1.2.3").connect(TestDevice())["error"]?["code"] == .string("NOT_PAIRED"), "only loopback")
        var liar = ConnectOptions()
        liar.token = "not-a-token-of-mine"
        let refused = try local.open()
        #expect(
            try refused.connect(TestDevice(), liar)["error"]?["details"]?["code"] == .string("AUTH_DEVICE_TOKEN_MISMATCH")
                && refused.closeCode == 1008
        )
    }

    @Test func pendingPairingsAreCappedPerAddress() throws {
        var settings = GatewaySettings()
        settings.maxPendingRequests = 20  // two per address
        let bed = GatewayTestbed(settings: settings)
        var codes: [String] = []
        for _ in 0..<3 {
            let error = try bed.open(peerAddress: "10.0.0.9").connect(TestDevice())["error"]
            codes.append("\(error?["code"]?.stringValue ?? "") \(error?["details"]?["code"]?.stringValue ?? "")")
        }
        #expect(codes == ["NOT_PAIRED PAIRING_REQUIRED", "NOT_PAIRED PAIRING_REQUIRED", "UNAVAILABLE PAIRING_RATE_LIMITED"])
        #expect(bed.bed.journal.pendingPairings.count == 2)
        #expect(try bed.open(peerAddress: "10.0.0.10").connect(TestDevice())["error"]?["details"]?["code"] == .string("PAIRING_REQUIRED"))
    }

    @Test func removingADeviceAnswersUnknownAndForeignIdsWithAnError() throws {
        let bed = GatewayTestbed()
        let (admin, _) = try bed.paired(TestDevice())
        let clawline = DeviceRecord(
            id: "phone",
            userID: "u",
            protocolName: "clawline",
            claimedName: nil,
            deviceInfoJSON: nil,
            isAdmin: true,
            status: .approved,
            tokenHash: nil,
            tokenDelivered: true,
            createdAt: 1,
            lastSeenAt: nil
        )
        bed.bed.hub.devices.update(DeviceSnapshot.Request(deviceID: "phone")) {
            $0.device = clawline
        } completion: { _ in
        }
        bed.bed.settle()
        for deviceID in ["no-such-device", "phone"] {
            let removed = try #require(admin.request("device.pair.remove", .object(["deviceId": .string(deviceID)])))
            #expect(removed["ok"] == .bool(false) && removed["error"]?["code"] == .string("INVALID_REQUEST"))
        }
        #expect(bed.bed.journal.devices["phone"]?.status == .approved)
        #expect(admin.request("device.unpair", .object(["deviceId": .string("no-such-device"), "botIds": .string("*")]))?["ok"] == .bool(false))
        #expect(
            admin.request("device.token.revoke", .object(["deviceId": .string("no-such-device"), "role": .string("operator")]))?["ok"] == .bool(false)
        )

        let member = TestDevice()
        let (memberClient, _) = try bed.paired(member, .scopes(["operator.read"]))
        let removed = try #require(admin.request("device.pair.remove", .object(["deviceId": .string(member.deviceID)])))
        #expect(removed["payload"] == .object(["deviceId": .string(member.deviceID), "removed": .bool(true)]))
        #expect(memberClient.closeCode == 1008 && memberClient.socket.closeFrame?.reason == "device removed")
        #expect(bed.bed.journal.devices[member.deviceID]?.status == .unpaired, "removed, it may ask to pair again")
    }
}

extension ConnectOptions {
    /// Today's OpenClawKit on iOS: protocol 4 only, v2 signature, `openclaw-ios`, mode `ui`.
    static var openClawKitIOS: ConnectOptions {
        var options = ConnectOptions()
        (options.protocols, options.clientID, options.mode, options.signsV2) = (4...4, "openclaw-ios", "ui", true)
        (options.platform, options.family) = ("iOS 18.4.0", "iPhone")
        return options
    }

    /// The OpenClaw CLI: protocol 4 only, v3 signature.
    static var openClawCLI: ConnectOptions {
        var options = ConnectOptions()
        (options.protocols, options.clientID, options.mode) = (4...4, "cli", "cli")
        return options
    }
}
