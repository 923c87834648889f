import Foundation
import RelayCore
import RelayTransport

/// One simulated Clawline device on the generator's loop: pairs, authenticates, then hands every
/// live frame to the scenario as raw text (parsing is left to the scenario, to keep the generator cheap).
final class BenchDevice: ClientHandler {
    enum Phase { case idle, pairing, authenticating, live, closed }

    let deviceID: String
    let loop: ServiceLoop
    let target: ServiceLoop.ClientTarget
    private(set) var phase = Phase.idle
    private(set) var connection: WebSocketConnection?
    var token: String?
    var userID: String?
    var authResult: JSONValue?
    /// When set, the id of the last final event seen live is kept in `lastEventID` (a reconnect cursor).
    var tracksCursor = false
    private(set) var lastEventID: String?
    private var cursor: String?

    var onPaired: ((BenchDevice) -> Void)?
    var onLive: ((BenchDevice) -> Void)?
    var onText: ((BenchDevice, String) -> Void)?
    var onFailure: ((BenchDevice, String) -> Void)?

    init(loop: ServiceLoop, target: ServiceLoop.ClientTarget, deviceID: String = Identifiers.newUUID()) {
        self.loop = loop
        self.target = target
        self.deviceID = deviceID
    }

    /// The same paired device on another relay (another node of a cluster), not connected yet.
    func elsewhere(_ target: ServiceLoop.ClientTarget) -> BenchDevice {
        let moved = BenchDevice(loop: loop, target: target, deviceID: deviceID)
        (moved.token, moved.userID) = (token, userID)
        return moved
    }

    func pair() {
        phase = .pairing
        loop.connect(to: target, handler: self)
    }

    func authenticate(lastMessageID: String? = nil) {
        phase = .authenticating
        cursor = lastMessageID
        loop.connect(to: target, handler: self)
    }

    func send(_ text: String) { connection?.send(text: text) }

    func close() {
        phase = .closed
        let old = connection
        connection = nil
        old?.close(code: 1000)
    }

    func clientConnected(_ connection: WebSocketConnection) {
        self.connection = connection
        switch phase {
        case .pairing:
            let frame = JSONValue.object([
                "type": .string("pair_request"), "protocolVersion": .int(1), "deviceId": .string(deviceID),
                "claimedName": .string("bench"), "deviceInfo": .object(["platform": .string("bench"), "model": .string("clawrelay")]),
            ])
            connection.send(text: frame.encoded())
        case .authenticating:
            var fields: [String: JSONValue] = [
                "type": .string("auth"), "protocolVersion": .int(1), "token": .string(token ?? ""), "deviceId": .string(deviceID),
            ]
            if let cursor { fields["lastMessageId"] = .string(cursor) }
            connection.send(text: JSONValue.object(fields).encoded())
        default:
            connection.close(code: 1000)
        }
    }

    func client(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard case .text(let text) = message else { return }
        switch phase {
        case .pairing:
            guard let frame = JSONValue.parse(text), frame["type"]?.stringValue == "pair_result" else { return }
            guard frame["success"]?.boolValue == true else { return fail("pairing refused: \(text)") }
            token = frame["token"]?.stringValue
            userID = frame["userId"]?.stringValue
            phase = .idle
            self.connection = nil
            connection.close(code: 1000)
            onPaired?(self)
        case .authenticating:
            guard let frame = JSONValue.parse(text), frame["type"]?.stringValue == "auth_result" else { return }
            guard frame["success"]?.boolValue == true else { return fail("auth refused: \(text)") }
            authResult = frame
            phase = .live
            onLive?(self)
        case .live:
            if tracksCursor, FrameSniffer.contains(text, "\"streaming\":false"), let id = FrameSniffer.string("id", in: text), id.hasPrefix("s_") {
                lastEventID = id
            }
            onText?(self, text)
        case .idle, .closed:
            break
        }
    }

    func clientClosed(_ connection: WebSocketConnection?, error: String?) {
        // A socket this device already let go of (the pairing socket, a replaced one) is no news.
        if let connection, connection !== self.connection { return }
        self.connection = nil
        if phase == .pairing || phase == .authenticating || phase == .live {
            fail(error ?? "closed by the relay")
        }
    }

    private func fail(_ reason: String) {
        let wasLive = phase
        phase = .closed
        connection?.close(code: 1000)
        if wasLive != .closed { onFailure?(self, reason) }
    }
}

/// Pairs and authenticates a fleet of devices through the protocol itself, with the first device
/// as the admin that approves the others.
final class Fleet {
    let loop: ServiceLoop
    let target: ServiceLoop.ClientTarget
    private(set) var admin: BenchDevice?
    private(set) var devices: [BenchDevice] = []
    private var waiting: [BenchDevice] = []
    private var inFlight = 0
    private var sameUser = false
    private var concurrency = 64
    private var completion: ((Result<[BenchDevice], BenchError>) -> Void)?
    private var ready = 0

    init(loop: ServiceLoop, target: ServiceLoop.ClientTarget) {
        self.loop = loop
        self.target = target
    }

    /// Pairs `count` devices (all under the admin's user when `sameUser`) and authenticates them.
    func provision(count: Int, sameUser: Bool, concurrency: Int = 64, completion: @escaping (Result<[BenchDevice], BenchError>) -> Void) {
        self.sameUser = sameUser
        self.concurrency = concurrency
        self.completion = completion
        waiting = (0..<count).map { _ in BenchDevice(loop: loop, target: target) }
        devices = waiting
        let admin = BenchDevice(loop: loop, target: target)
        self.admin = admin
        admin.onFailure = { [weak self] _, reason in self?.finish(.failure(BenchError("admin device: \(reason)"))) }
        admin.onPaired = { device in device.authenticate() }
        admin.onLive = { [weak self] _ in self?.startMore() }
        admin.onText = { [weak self] admin, text in
            guard FrameSniffer.contains(text, "pair_approval_request"), let frame = JSONValue.parse(text), let id = frame["deviceId"]?.stringValue,
                let self
            else { return }
            let user = self.sameUser ? (admin.userID ?? "") : Identifiers.newUUID()
            admin.send(
                JSONValue.object(["type": .string("pair_decision"), "deviceId": .string(id), "approve": .bool(true), "userId": .string(user)])
                    .encoded()
            )
        }
        admin.pair()
        if count == 0 { admin.onLive = { [weak self] _ in self?.finish(.success([])) } }
    }

    private func startMore() {
        while inFlight < concurrency, !waiting.isEmpty {
            let device = waiting.removeFirst()
            inFlight += 1
            device.onFailure = { [weak self] device, reason in self?.finish(.failure(BenchError("device \(device.deviceID): \(reason)"))) }
            device.onPaired = { device in device.authenticate() }
            device.onLive = { [weak self] _ in
                guard let self else { return }
                inFlight -= 1
                ready += 1
                if ready == devices.count { finish(.success(devices)) } else { startMore() }
            }
            device.pair()
        }
    }

    private func finish(_ result: Result<[BenchDevice], BenchError>) {
        guard let completion else { return }
        self.completion = nil
        for device in devices { device.onFailure = nil }
        completion(result)
    }
}
