import DiscoClawWire
import RelayCore
import RelayTesting
import RelayTransport
import Testing

@testable import DiscoClawBridge

/// Registration, tokens, devices and the socket's authentication, in memory.
@Suite struct DiscoClawAuthTests {
    static func registration(name: String? = "iPhone", platform: String? = "ios", setupToken: String? = DiscoClawTestbed.setupToken) -> JSONValue {
        .object(
            ["name": name.map(JSONValue.string), "platform": platform.map(JSONValue.string), "setupToken": setupToken.map(JSONValue.string)]
                .compactMapValues { $0 }
        )
    }

    @Test func aRegistrationGetsIdsAndAHexTokenThatAuthenticates() throws {
        let bed = DiscoClawTestbed()
        let registered = try bed.expect(bed.call("POST", "/auth/register", Self.registration(name: "Tim's iPhone")), 201)
        let token = try #require(registered["token"]?.stringValue)
        #expect(token.count == 64 && token.allSatisfy { "0123456789abcdef".contains($0) }, "32 random bytes as hex")
        let me = try bed.expect(bed.call("GET", "/auth/me", token: token), 200)
        #expect(me["user"] == .object(["id": registered["userId"]!]))
        #expect(me["device"] == .object(["id": registered["deviceId"]!, "name": .string("Tim's iPhone"), "platform": .string("ios")]))
        #expect(bed.bed.journal.devices[registered["deviceId"]?.stringValue ?? ""]?.tokenHash == Digest.sha256Hex(token), "only the hash is kept")
        let second = try bed.register()
        #expect(second.userID == registered["userId"]?.stringValue, "the app's second device joins the listener's one user")
        #expect(second.token != token && second.deviceID != registered["deviceId"]?.stringValue)
    }

    @Test func aRegistrationWithoutANameAsTheAppSendsIt() throws {
        let bed = DiscoClawTestbed()
        let mac = try bed.register(name: nil, platform: "macos")
        #expect(try mac.json("GET", "/auth/me")["device"] == .object(["id": .string(mac.deviceID), "platform": .string("macos")]))
        let blank = try bed.register(name: "   ")
        #expect(try blank.json("GET", "/auth/me")["device"]?["name"] == nil, "a blank name is no name")
    }

    @Test func withoutASetupTokenRegistrationIsDisabled() throws {
        let bed = DiscoClawTestbed {
            $0.setupToken = nil
            $0.users = []
        }
        let body = try bed.expect(bed.call("POST", "/auth/register", Self.registration()), 403)
        #expect(body.objectValue?.count == 1 && body["error"]?.stringValue?.hasPrefix("Registration is disabled.") == true, "\(body)")
    }

    @Test(arguments: [
        (DiscoClawAuthTests.registration(setupToken: String(repeating: "x", count: 30)), 401, "Invalid setup token"),
        (DiscoClawAuthTests.registration(setupToken: nil), 401, "Invalid setup token"),
        (DiscoClawAuthTests.registration(platform: nil), 400, "platform is required (ios or macos)"),
        (DiscoClawAuthTests.registration(name: String(repeating: "n", count: 65)), 400, "name is longer than 64 bytes"),
    ])
    func registrationRefusalsAreStringOnlyBodies(body: JSONValue, status: Int, error: String) throws {
        let bed = DiscoClawTestbed()
        #expect(try bed.expect(bed.call("POST", "/auth/register", body), status) == .object(["error": .string(error)]))
        #expect(bed.bed.journal.devices.isEmpty)
    }

    @Test func registrationsAreRateLimitedAcrossRegisterAndAddDeviceForAMinute() throws {
        let bed = DiscoClawTestbed { $0.registrationsPerMinute = 3 }
        let phone = try bed.register()
        _ = try phone.addDevice()
        _ = try bed.register()
        let refused = try bed.expect(bed.call("POST", "/auth/register", Self.registration()), 429)
        #expect(refused == .object(["error": .string("Too many registrations; try again in a minute")]))
        #expect(try phone.call("POST", "/auth/devices", .object(["name": .string("iPad"), "platform": .string("ios")])).status == 429)
        #expect(try phone.call("GET", "/auth/me").status == 200, "an existing token still works")
        bed.bed.advance(millis: 60_000)
        _ = try bed.register()
    }

    @Test(arguments: ["/auth/me", "/auth/devices", "/conversations", "/sync"])
    func aMissingOrWrongTokenIs401WithTheServersBodies(path: String) throws {
        let bed = DiscoClawTestbed()
        #expect(try bed.expect(bed.call("GET", path), 401) == .object(["error": .string("Missing authorization token")]))
        for inQuery in [false, true] {
            #expect(
                try bed.expect(bed.call("GET", path, token: String(repeating: "ab", count: 32), inQuery: inQuery), 401)
                    == .object(["error": .string("Invalid token")])
            )
        }
        let phone = try bed.register()
        for inQuery in [false, true] { #expect(try bed.call("GET", path, token: phone.token, inQuery: inQuery).status == 200) }
    }

    @Test func aSecondDeviceJoinsTheSameUserAndTheListMarksTheCaller() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register(name: "iPhone")
        let mac = try phone.addDevice(name: "MacBook", platform: "macos")
        #expect(mac.deviceID != phone.deviceID && mac.token != phone.token)
        #expect(try mac.json("GET", "/auth/me")["user"]?["id"]?.stringValue == phone.userID)
        _ = try bed.registerStranger()
        for device in [phone, mac] {
            let listed = try #require(device.json("GET", "/auth/devices")["devices"]?.arrayValue)
            #expect(Set(listed.compactMap { $0["id"]?.stringValue }) == [phone.deviceID, mac.deviceID], "not the stranger's")
            #expect(listed.filter { $0["isCurrent"] == .bool(true) }.map { $0["id"]?.stringValue } == [device.deviceID])
            let macItem = try #require(listed.first { $0["id"]?.stringValue == mac.deviceID })
            #expect(macItem["name"] == .string("MacBook") && macItem["platform"] == .string("macos"))
            #expect(macItem["lastSeen"]?.intValue != nil && macItem["createdAt"]?.intValue != nil)
        }
    }

    @Test func aDevicePastMaxDevicesPerUserIsRefused() throws {
        let bed = DiscoClawTestbed { $0.maxDevicesPerUser = 2 }
        let phone = try bed.register()
        _ = try phone.addDevice()
        let refused = try phone.json("POST", "/auth/devices", .object(["name": .string("third"), "platform": .string("ios")]), status: 409)
        #expect(refused == .object(["error": .string("This user already has 2 devices; remove one first")]))
        #expect(try phone.json("GET", "/auth/devices")["devices"]?.arrayValue?.count == 2)
    }

    @Test func revokingADeviceKillsItsTokenAndClosesItsSockets() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        let mac = try phone.addDevice()
        let (macSocket, phoneSocket) = (mac.socket(), phone.socket())
        #expect(try bed.expect(bed.call("GET", "/health"), 200)["connections"] == .int(2))
        #expect(try phone.call("DELETE", "/auth/devices/\(mac.deviceID)").status == 204)
        #expect(macSocket.closeFrame?.code == 1008 && macSocket.closeFrame?.reason == "Device revoked")
        #expect(try mac.json("GET", "/auth/me", status: 401) == .object(["error": .string("Invalid token")]))
        #expect(!phoneSocket.isClosed, "the revoking device's own socket stays open")
        #expect(try phone.json("GET", "/auth/devices")["devices"]?.arrayValue?.map { $0["id"]?.stringValue } == [phone.deviceID])
        #expect(bed.harness.refusal(ofWebSocket: RequestHeaders(query: "token=\(mac.token)"))?.status == 401)
        #expect(bed.downstream.connectionCount == 1)
    }

    @Test func anotherUsersDeviceCannotBeRevoked() throws {
        let bed = DiscoClawTestbed()
        let (alice, bob) = (try bed.register(), try bed.registerStranger())
        #expect(try alice.json("DELETE", "/auth/devices/\(bob.deviceID)", status: 404) == DiscoClawTestbed.notFound)
        #expect(try alice.call("DELETE", "/auth/devices/no-such-device").status == 404)
        #expect(try bob.call("GET", "/auth/me").status == 200)
    }

    @Test func anOperatorRevocationClosesTheDevicesSockets() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        let socket = phone.socket()
        bed.bed.hub.devices.cutOff(phone.deviceID)
        bed.bed.settle()
        #expect(socket.closeFrame?.code == 1008)
    }

    @Test func aConfiguredUserIDMakesEveryRegistrationOneUser() throws {
        let bed = DiscoClawTestbed { $0.userID = "tim" }
        let (phone, mac) = (try bed.register(), try bed.register(name: "Mac", platform: "macos"))
        #expect(phone.userID == "tim" && mac.userID == "tim")
        #expect(try phone.json("GET", "/auth/devices")["devices"]?.arrayValue?.count == 2)
        let shared = try phone.createConversation("shared")
        #expect(try mac.json("GET", "/conversations/\(shared)")["title"] == .string("shared"))
        #expect(try bed.registerStranger().userID == "stranger")
    }

    @Test func everyRegistrationWithTheSetupTokenJoinsTheListenersOneUserAndSeesItsHistory() throws {
        let bed = DiscoClawTestbed()
        let stranger = try bed.registerStranger()
        let phone = try bed.register()
        #expect(phone.userID != stranger.userID, "a configured person's user is not the listener's")
        let id = try phone.createConversation("from the phone")
        _ = try phone.post("hello", in: id)
        let mac = try bed.register(name: "Mac", platform: "macos")
        #expect(mac.userID == phone.userID)
        #expect(try mac.json("GET", "/conversations").arrayValue?.map { $0["id"] } == [.string(id)])
        #expect(try mac.sync()["messages"]?.arrayValue?.count == 2, "the message and its answer")
        #expect(try stranger.json("GET", "/conversations") == .array([]))
    }

    @Test func twoFirstRegistrationsAtOnceMakeOneUser() throws {
        let bed = DiscoClawTestbed()
        var users: [String] = []
        for _ in 0..<2 { bed.downstream.registrar.user(for: .listenersUser) { users.append((try? $0.get()) ?? "failed") } }
        #expect(users.isEmpty, "the stored devices are read first")
        bed.bed.settle()
        #expect(users.count == 2 && users[0] == users[1] && users[0] != "failed")
        #expect(try bed.register().userID == users[0])
    }

    @Test func theListenersUserOutlivesItsDevicesAndSurvivesARestart() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        #expect(try phone.call("DELETE", "/auth/devices/\(phone.deviceID)").status == 204)
        let restarted = DiscoClawDownstream(settings: bed.downstream.settings, hub: bed.bed.hub, clock: bed.bed.clock, logger: bed.bed.logger)
        let harness = bed.bed.harness(restarted, config: DiscoClawDownstream.listenerConfig(bed.downstream.settings))
        let body = Self.registration()
        let again = try #require(harness.request("POST", "/auth/register", json: body)?.json?["userId"]?.stringValue)
        #expect(again == phone.userID, "a revoked device still names the user; a new listener finds it in the store")
    }

    @Test func theListenersUserIsTheOldestDeviceOfNoConfiguredPerson() {
        func device(_ id: String, user: String) -> DeviceRecord {
            DeviceRecord(
                id: id,
                userID: user,
                protocolName: "discoclaw",
                claimedName: nil,
                deviceInfoJSON: nil,
                isAdmin: false,
                status: .revoked,
                tokenHash: nil,
                tokenDelivered: true,
                createdAt: 1,
                lastSeenAt: nil
            )
        }
        let people = [DiscoClawSettings.User(setupToken: String(repeating: "b", count: 16), userID: "bob")]
        #expect(DiscoClawRegistrar.listenersUser(among: [device("d1", user: "bob"), device("d2", user: "tim")], users: people) == "tim")
        #expect(DiscoClawRegistrar.listenersUser(among: [device("d1", user: "bob")], users: people) == nil)
        var settings = DiscoClawSettings()
        settings.users = people
        #expect(DiscoClawRegistrar.joins(presenting: String(repeating: "b", count: 16), settings) == .user("bob"))
        #expect(DiscoClawRegistrar.joins(presenting: "nope", settings) == nil)
        #expect(!DiscoClawRegistrar.isOpen(DiscoClawSettings()) && DiscoClawRegistrar.isOpen(settings), "a person's token alone opens registration")
        settings.setupToken = String(repeating: "t", count: 16)
        #expect(DiscoClawRegistrar.joins(presenting: String(repeating: "t", count: 16), settings) == .listenersUser)
        settings.userID = "tim"
        #expect(DiscoClawRegistrar.joins(presenting: String(repeating: "t", count: 16), settings) == .user("tim"))
    }

    @Test func unknownPathsAndBadBodiesAreRefusedAndChangeNothing() throws {
        let bed = DiscoClawTestbed { $0.maxBodyBytes = 4096 }
        let phone = try bed.register()
        for path in ["/nope", "/conversations/x/y/z", "/auth"] { #expect(try phone.json("GET", path, status: 404) == DiscoClawTestbed.notFound) }
        for raw in ["[1, 2]", "\"text\"", "{not json", "null"] {
            let response = try #require(
                bed.harness.request("POST", "/conversations", headers: RequestHeaders(authorization: "Bearer \(phone.token)"), body: Array(raw.utf8))
            )
            #expect(try bed.expect(response, 400) == DiscoClawError.bodyNotObject.body.json, "\(raw)")
        }
        let big = try phone.json("POST", "/conversations", .object(["title": .string(String(repeating: "x", count: 8000))]), status: 413)
        #expect(big["message"] == .string("the body is larger than 4096 bytes"))
        #expect(try phone.json("GET", "/conversations") == .array([]), "nothing was created by refused bodies")
        #expect(try bed.call("GET", "/ws").status == 426)
    }

    @Test func healthNeedsNoTokenAndCountsOpenSockets() throws {
        let bed = DiscoClawTestbed()
        bed.bed.advance(millis: 5_000)
        #expect(try bed.expect(bed.call("GET", "/health"), 200) == .object(["ok": .bool(true), "uptime": .int(5), "connections": .int(0)]))
        let phone = try bed.register()
        let sockets = [phone.socket(), phone.socket()]
        #expect(try bed.expect(bed.call("GET", "/health"), 200)["connections"] == .int(2))
        sockets[0].close()
        #expect(try bed.expect(bed.call("GET", "/health"), 200)["connections"] == .int(1))
    }

    @Test func aDeviceWhoseLastSocketClosesGoesOffline() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        let socket = phone.socket()
        #expect(bed.bed.hub.presence.entries[phone.deviceID]?.presence.state == .foreground)
        socket.close()
        #expect(bed.bed.hub.presence.entries[phone.deviceID]?.presence.state == .offline)
    }

    @Test func aSocketIsRefusedAtTheUpgradeWithoutAGoodTokenAndTakesEitherForm() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        let missing = try #require(bed.harness.refusal(ofWebSocket: RequestHeaders()))
        #expect(missing.status == 401 && missing.json == .object(["error": .string("Missing authorization token")]))
        let wrong = try #require(bed.harness.refusal(ofWebSocket: RequestHeaders(authorization: "Bearer \(String(repeating: "cd", count: 32))")))
        #expect(wrong.json == .object(["error": .string("Invalid token")]))
        #expect(bed.harness.refusal(ofWebSocket: RequestHeaders(query: "token=\(phone.token)")) == nil)
        #expect(bed.harness.refusal(ofWebSocket: RequestHeaders(authorization: "Bearer \(phone.token)")) == nil)
        let late = bed.connect(token: "cd")
        #expect(late.closeFrame?.code == 1008 && late.closeFrame?.reason == "Invalid token", "a token gone between the upgrade and the open")
        let bearer = bed.harness.connect(headers: RequestHeaders(authorization: "Bearer \(phone.token)"))
        _ = try phone.json("PATCH", "/conversations/\(phone.createConversation("x"))", .object(["title": .string("y")]))
        #expect(bearer.readJSON().map(\.type) == ["conversation.updated"])
    }
}

extension HTTPResponse {
    var json: JSONValue? { if case .bytes(let bytes) = body { JSONValue.parse(bytes) } else { nil } }
}

extension DiscoClawErrorBody {
    var json: JSONValue? { JSONValue.parse(DiscoClawJSON.encode(self)) }
}
