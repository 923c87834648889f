import Crypto
import Foundation
import GatewayWire
import Logging
import RelayCore
import RelayTesting
import RelayTransport
import Testing

@testable import GatewayBridge

/// The gateway listener in memory: the real downstream on the core over memory journals, driven
/// by clients that speak the protocol as OpenClaw's apps do.
final class GatewayTestbed {
    let bed: RelayTestbed
    let downstream: GatewayDownstream
    let harness: ListenerHarness
    let settings: GatewaySettings
    private let dataDirectory = NSTemporaryDirectory() + "gateway-" + UUID().uuidString

    /// Refusals are logged at info; a test reads them from the frames instead.
    static let quiet: Logger = {
        var logger = Logger(label: "gateway-test")
        logger.logLevel = .error
        return logger
    }()

    init(settings: GatewaySettings = GatewaySettings(), backends: [any Backend] = [ScriptedBackend.echo()]) {
        var settings = settings
        if settings.backendKinds.isEmpty {
            settings.backendKinds = Dictionary(uniqueKeysWithValues: backends.map { ($0.name, $0.name) })
        }
        self.settings = settings
        bed = RelayTestbed(backends: backends)
        downstream = GatewayDownstream(
            settings: settings,
            hub: bed.hub,
            loop: bed.loop,
            clock: bed.clock,
            dataDirectory: dataDirectory,
            fingerprint: "fp-test",
            logger: Self.quiet
        )
        downstream.start()
        bed.settle()
        harness = bed.harness(downstream, config: GatewayDownstream.listenerConfig(settings))
    }

    deinit { try? FileManager.default.removeItem(atPath: dataDirectory) }

    /// A socket that read its challenge.
    func open(peerAddress: String = "127.0.0.1") throws -> GatewayTestClient {
        try GatewayTestClient(harness.connect(peerAddress: peerAddress), clock: bed.clock)
    }

    /// Approves the device's pending request, as `clawrelay devices approve` does.
    func approve(_ device: TestDevice) {
        _ = bed.hub.devices.pairing.decide(device.deviceID, approve: true, userID: nil) { _ in }
        bed.settle()
    }

    /// A connected client: asks, is approved when pairing is required, and connects again; the
    /// device keeps the token `hello-ok` issued.
    func paired(_ device: TestDevice, _ options: ConnectOptions = ConnectOptions()) throws -> (GatewayTestClient, JSONValue) {
        var client = try open()
        var answer = try client.connect(device, options)
        if answer["ok"]?.boolValue != true {
            #expect(answer["error"]?["code"]?.stringValue == "NOT_PAIRED", "\(answer)")
            approve(device)
            client = try open()
            answer = try client.connect(device, options)
        }
        #expect(answer["ok"]?.boolValue == true, "\(answer)")
        if let token = answer["payload"]?["auth"]?["deviceToken"]?.stringValue { device.token = token }
        return (client, answer)
    }
}

/// An OpenClaw device: an Ed25519 key and the token the gateway gave it.
final class TestDevice {
    let key = Curve25519.Signing.PrivateKey()
    var token = ""

    var rawKey: [UInt8] { Array(key.publicKey.rawRepresentation) }
    var deviceID: String { DeviceAuth.deviceID(forRawKey: rawKey) }
    var publicKey: String { Base64URL.encode(rawKey) }
}

/// How a client connects: who it says it is, what it asks for and how it signs.
struct ConnectOptions {
    var role = "operator"
    var scopes = ["operator.admin"]
    var mode = "cli"
    var clientID = "test-client"
    var platform = "linux"
    var family = ""
    var protocols: ClosedRange<Int64> = 3...3
    var commands: [String] = []
    /// `connect.caps`; nil: a node's camera, nothing for an operator.
    var caps: [String]?
    /// The `auth.token` sent (and signed); nil: the device's token.
    var token: String?
    /// The whole `auth` sent instead (its token signed).
    var auth: ConnectParams.Auth?
    var signsV2 = false
    var nonce: String?
    var signedAt: Int64?
    /// Changes the signed params before they go out.
    var tamper: (inout ConnectParams) -> Void = { _ in }

    static func node(_ commands: [String] = ["camera.snap"]) -> ConnectOptions {
        var options = ConnectOptions()
        (options.role, options.scopes, options.mode, options.commands) = ("node", [], "node", commands)
        return options
    }

    static func scopes(_ scopes: [String], caps: [String]? = nil) -> ConnectOptions {
        var options = ConnectOptions()
        options.scopes = scopes
        options.caps = caps
        return options
    }
}

/// One client socket speaking the gateway protocol in memory.
final class GatewayTestClient {
    let socket: TestSocket
    let clock: TestClock
    let challenge: ConnectChallenge
    /// Frames read and not yet taken by `request` or `event`.
    private(set) var pending: [JSONValue] = []
    /// Every frame read, in order.
    private(set) var seen: [JSONValue] = []
    private var nextID = 0

    init(_ socket: TestSocket, clock: TestClock) throws {
        self.socket = socket
        self.clock = clock
        let first = try #require(socket.readJSON().first)
        #expect(first["event"]?.stringValue == "connect.challenge")
        challenge = try #require(GatewayJSON.decode(ConnectChallenge.self, from: first["payload"] ?? .null))
    }

    /// Reads what the relay sent since the last read.
    func pump() {
        let fresh = socket.readJSON()
        seen += fresh
        pending += fresh
    }

    func send(_ frame: JSONValue) { socket.send(json: frame) }

    /// Sends a request and returns its response (nil while it has none).
    @discardableResult
    func request(_ method: String, _ params: JSONValue = .object([:])) -> JSONValue? {
        nextID += 1
        let id = "\(nextID)"
        send(.object(["type": .string("req"), "id": .string(id), "method": .string(method), "params": params]))
        return response(id)
    }

    /// The response to request `id`, once it came.
    func response(_ id: String) -> JSONValue? {
        pump()
        guard let index = pending.firstIndex(where: { $0["type"]?.stringValue == "res" && $0["id"]?.stringValue == id }) else { return nil }
        return pending.remove(at: index)
    }

    /// The id the next request gets.
    var upcomingID: String { "\(nextID + 1)" }

    /// Takes the events named `name` (and matching `filter`) read so far, oldest first.
    func events(_ name: String, where filter: (JSONValue) -> Bool = { _ in true }) -> [JSONValue] {
        pump()
        var taken: [JSONValue] = []
        var kept: [JSONValue] = []
        for frame in pending {
            if frame["type"]?.stringValue == "event" && frame["event"]?.stringValue == name && filter(frame) {
                taken.append(frame)
            } else {
                kept.append(frame)
            }
        }
        pending = kept
        return taken
    }

    /// Takes the payloads of `chat` events in a state.
    func chat(_ state: String) -> [JSONValue] {
        events("chat") { $0["payload"]?["state"]?.stringValue == state }.compactMap(\.["payload"])
    }

    func connectParams(_ device: TestDevice, _ options: ConnectOptions = ConnectOptions()) -> ConnectParams {
        var client = ConnectParams.Client(id: options.clientID, version: "1.0", platform: options.platform, mode: options.mode)
        client.deviceFamily = options.family
        var params = ConnectParams.signed(
            client: client,
            role: options.role,
            scopes: options.scopes,
            protocols: options.protocols,
            token: options.auth?.signedToken ?? options.token ?? device.token,
            device: (device.deviceID, device.publicKey),
            signedAt: options.signedAt ?? clock.nowMillis(),
            nonce: options.nonce ?? challenge.nonce,
            signsV2: options.signsV2
        ) { DeviceAuth.sign($0, with: device.key) }
        if let auth = options.auth { params.auth = auth }
        params.commands = options.commands
        params.caps = options.caps.map { $0.map(JSONValue.string) } ?? (options.role == "node" ? [.string("camera")] : [])
        options.tamper(&params)
        return params
    }

    /// Sends `connect` and returns its response.
    func connect(_ device: TestDevice, _ options: ConnectOptions = ConnectOptions()) throws -> JSONValue {
        try #require(request("connect", GatewayJSON.value(connectParams(device, options))))
    }

    var closeCode: UInt16? { socket.closeFrame?.code }
}
