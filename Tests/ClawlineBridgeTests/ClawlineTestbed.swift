import ClawlineWire
import Foundation
import RelayCore
import RelayTesting
import RelayTransport
import Testing

@testable import ClawlineBridge

/// The Clawline listener in memory: the real downstream on the core over memory journals, driven
/// by sockets that speak the wire format as the app does, on a test clock.
final class ClawlineTestbed {
    /// A paired device as the app keeps it.
    struct Device {
        var deviceID: String
        var token: String
        var userID: String
    }

    /// An authenticated socket: its `auth_result` and the frames after `user_info` (the replay,
    /// and for an admin the requests waiting for a decision).
    struct Session {
        var socket: TestSocket
        var result: JSONValue
        var userInfo: JSONValue
        var after: [JSONValue]
    }

    let bed: RelayTestbed
    let downstream: ClawlineDownstream
    let harness: ListenerHarness
    let assetsDirectory: String
    private let dataDirectory: String

    init(settings: ClawlineSettings = ClawlineSettings(), backends: [any Backend] = [ScriptedBackend.echo()]) {
        bed = RelayTestbed(backends: backends)
        dataDirectory = NSTemporaryDirectory() + "clawline-" + UUID().uuidString
        assetsDirectory = dataDirectory + "/assets"
        downstream = ClawlineDownstream(
            settings: settings,
            hub: bed.hub,
            loop: bed.loop,
            clock: bed.clock,
            signingKey: Self.signingKey,
            dataDirectory: dataDirectory,
            logger: bed.logger
        )
        downstream.start()
        bed.settle()
        harness = bed.harness(downstream, config: ClawlineDownstream.listenerConfig(settings))
    }

    deinit { try? FileManager.default.removeItem(atPath: dataDirectory) }

    static let signingKey = Array("0123456789abcdef0123456789abcdef".utf8)
    var journal: MemoryJournal { bed.journal }
    var hub: RelayHub { bed.hub }

    func advance(seconds: Double) { bed.advance(millis: Int64(seconds * 1000)) }

    // MARK: Frames

    static func newDeviceID() -> String { UUID().uuidString.lowercased() }
    static func newClientID() -> String { "c_" + UUID().uuidString.lowercased() }

    static func pairRequest(_ deviceID: String, name: String = "Test Device") -> JSONValue {
        ClientFrame.pairRequest(
            .init(deviceId: deviceID, claimedName: name, deviceInfo: ClientFrame.PairRequest.deviceInfo(platform: "iOS", model: "iPhone 15"))
        ).json
    }

    /// `auth` for the device; `cursor` nil leaves `lastMessageId` out.
    static func auth(_ device: Device, cursor: JSONValue? = nil) -> JSONValue {
        var frame = ClientFrame.auth(.init(token: device.token, deviceId: device.deviceID, lastMessageId: nil)).json
        if let cursor, case .object(var fields) = frame {
            fields["lastMessageId"] = cursor
            frame = .object(fields)
        }
        return frame
    }

    static func message(_ content: String, id: String = newClientID(), attachments: [JSONValue]? = nil, channel: ClawlineChannel? = nil) -> JSONValue
    {
        ClientFrame.message(.init(id: id, content: content, attachments: attachments, channelType: channel)).json
    }

    static func decision(_ deviceID: String, approve: Bool = true, userID: String? = UUID().uuidString.lowercased()) -> JSONValue {
        ClientFrame.pairDecision(.init(deviceId: deviceID, approve: approve, userId: approve ? userID : nil)).json
    }

    // MARK: Devices

    /// A socket sends `pair_request` for a new device and stays to wait.
    func requestPairing(_ deviceID: String = newDeviceID(), name: String = "Pending") -> TestSocket {
        let socket = harness.connect()
        socket.send(json: Self.pairRequest(deviceID, name: name))
        return socket
    }

    /// Pairs a new device (the first one becomes the admin at once).
    func pairFirstAdmin(_ deviceID: String = newDeviceID(), sourceLocation: SourceLocation = #_sourceLocation) throws -> Device {
        let socket = requestPairing(deviceID, name: "Admin")
        let result = try #require(socket.readJSON().first, sourceLocation: sourceLocation)
        try Self.expectPaired(result, deviceID: deviceID, sourceLocation: sourceLocation)
        socket.close()
        return Device(deviceID: deviceID, token: try #require(result["token"]?.stringValue), userID: try #require(result["userId"]?.stringValue))
    }

    /// Pairs a new device through `admin` (an authenticated admin socket), onto `userID` or a new user.
    func pairAndApprove(
        via admin: TestSocket,
        userID: String = UUID().uuidString.lowercased(),
        name: String = "Second",
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Device {
        let deviceID = Self.newDeviceID()
        let requester = requestPairing(deviceID, name: name)
        #expect(
            admin.readJSON().contains { $0.type == "pair_approval_request" && $0["deviceId"]?.stringValue == deviceID },
            sourceLocation: sourceLocation
        )
        admin.send(json: Self.decision(deviceID, userID: userID))
        let result = try #require(requester.readJSON().first, sourceLocation: sourceLocation)
        try Self.expectPaired(result, deviceID: deviceID, sourceLocation: sourceLocation)
        #expect(result["userId"]?.stringValue == userID, sourceLocation: sourceLocation)
        requester.close()
        return Device(deviceID: deviceID, token: try #require(result["token"]?.stringValue), userID: userID)
    }

    /// A successful `pair_result` for the device, whose token names it.
    static func expectPaired(_ frame: JSONValue, deviceID: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(frame.type == "pair_result" && frame["success"] == .bool(true) && frame["reason"] == nil, "\(frame)", sourceLocation: sourceLocation)
        let token = try #require(frame["token"]?.stringValue, sourceLocation: sourceLocation)
        let claims = try HS256Token(secret: signingKey).verify(token, nowSeconds: 0).get()
        #expect(claims.deviceId == deviceID && claims.sub == frame["userId"]?.stringValue, sourceLocation: sourceLocation)
        #expect(Identifiers.isUUIDv4(claims.sub), sourceLocation: sourceLocation)
    }

    /// Authenticates the device on a new socket.
    func connect(_ device: Device, cursor: JSONValue? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> Session {
        let socket = harness.connect()
        socket.send(json: Self.auth(device, cursor: cursor))
        let frames = socket.readJSON()
        let result = try #require(frames.first, sourceLocation: sourceLocation)
        #expect(result.type == "auth_result" && result["success"] == .bool(true), "\(result)", sourceLocation: sourceLocation)
        let info = try #require(frames.dropFirst().first, sourceLocation: sourceLocation)
        #expect(info.type == "user_info" && info["userId"]?.stringValue == device.userID, "\(info)", sourceLocation: sourceLocation)
        return Session(socket: socket, result: result, userInfo: info, after: Array(frames.dropFirst(2)))
    }

    /// The first admin, paired and authenticated.
    func setupAdmin() throws -> (Device, TestSocket) {
        let admin = try pairFirstAdmin()
        return (admin, try connect(admin).socket)
    }

    /// Changes the device's record as the operator CLI does, then tells the relay.
    func operatorChanges(_ deviceID: String, cutOff: Bool = false, _ change: @escaping @Sendable (inout DeviceRecord) -> Void) {
        hub.devices.update(DeviceSnapshot.Request(deviceID: deviceID)) { snapshot in
            if var device = snapshot.device {
                change(&device)
                snapshot.device = device
            }
        } completion: { _ in
        }
        bed.settle()
        if cutOff { hub.devices.cutOff(deviceID) } else { hub.devices.refresh(deviceID) }
        bed.settle()
    }

    func revoke(_ deviceID: String) { operatorChanges(deviceID, cutOff: true) { $0.status = .revoked } }

    /// The device's record in the store.
    func device(_ deviceID: String) -> DeviceRecord? { journal.devices[deviceID] }

    func isPending(_ deviceID: String) -> Bool { journal.pendingPairings["clawline|\(deviceID)"] != nil }

    /// An asset of `userID` stored as an upload leaves it.
    func storeAsset(of userID: String, bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47]) -> String {
        let id = Identifiers.newAssetID()
        let path = assetsDirectory + "/" + id
        precondition(FileManager.default.createFile(atPath: path, contents: Data(bytes)), "could not write \(path)")
        hub.assets.save(AssetRecord(id: id, userID: userID, mimeType: "image/png", size: Int64(bytes.count), path: path, createdAt: 0)) { _ in }
        bed.settle()
        return id
    }
}

extension ClientFrame {
    /// The frame as a client socket sends it.
    var json: JSONValue { JSONValue.parse(encoded()) ?? .null }
}

extension JSONValue {
    var type: String? { self["type"]?.stringValue }
    var isUserEcho: Bool { type == "message" && self["role"]?.stringValue == "user" }
    var isAssistantFinal: Bool { type == "message" && self["role"]?.stringValue == "assistant" && self["streaming"] == .bool(false) }
    var isStreamUpdate: Bool { type == "message" && self["role"]?.stringValue == "assistant" && self["streaming"] == .bool(true) }
}

extension [JSONValue] {
    func ofType(_ type: String) -> [JSONValue] { filter { $0.type == type } }
    var errorCodes: [String] { ofType("error").compactMap { $0["code"]?.stringValue } }
    var ackIDs: [String] { ofType("ack").compactMap { $0["id"]?.stringValue } }
    var finals: [String] { filter(\.isAssistantFinal).compactMap { $0["content"]?.stringValue } }
    var echoes: [String] { filter(\.isUserEcho).compactMap { $0["content"]?.stringValue } }
}

extension TestSocket {
    /// Sends a frame and reads what came back.
    func exchange(_ frame: JSONValue) -> [JSONValue] {
        send(json: frame)
        return readJSON()
    }

    /// The socket is open: an unknown frame type is answered with `invalid_message`, as Python's `assert_open` probes.
    func expectOpen(sourceLocation: SourceLocation = #_sourceLocation) {
        let answer = exchange(.object(["type": .string("probe_unknown_type")]))
        #expect(!isClosed && answer.errorCodes.last == "invalid_message", "\(answer)", sourceLocation: sourceLocation)
    }

    /// The relay closed the socket with `code`.
    func expectClosed(_ code: UInt16, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(isClosed && closeFrame?.code == code, "closed: \(isClosed), \(String(describing: closeFrame))", sourceLocation: sourceLocation)
    }
}
