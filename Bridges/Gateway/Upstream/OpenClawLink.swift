import Foundation
import Logging
import RelayCore
import RelayTransport

/// Who a link says it is in `connect`: an operator account, or a node the relay passes through.
public struct LinkHello {
    var role = "operator"
    var scopes = ["operator.read", "operator.write"]
    var mode = "backend"
    var displayName: String
    var caps: [JSONValue] = []
    var commands: [String] = []
    var permissions: JSONValue = .object([:])

    /// An interactive operator client (`clawrelay chat`): mode `cli`.
    public static func operatorClient(displayName: String) -> LinkHello {
        var hello = LinkHello(displayName: displayName)
        hello.mode = "cli"
        return hello
    }
}

/// The live connection of one upstream gateway identity: handshake, pairing wait, reconnects with
/// backoff and jitter, a tick watchdog, requests and events. Operator chat runs
/// (`OperatorRuns`) and node passthrough sit on top of it.
///
/// - Important: loop thread only.
public final class OpenClawLink: ClientHandler {
    static let minBackoffMillis = 1_000

    let name: String
    private let target: ServiceLoop.ClientTarget
    private let identity: AccountIdentity
    private let loop: ServiceLoop
    private let logger: Logger
    private let onState: (LinkState, String) -> Void
    private let hello: LinkHello
    /// Events the link itself does not handle (`chat` for operators, `node.invoke.request` for nodes).
    public var onEvent: ((String, JSONValue) -> Void)?
    /// The connection dropped; whatever was waiting on it has failed.
    public var onDown: (() -> Void)?
    /// The longest wait between tries (a person waiting on a terminal wants short ones).
    private let maxBackoffMillis: Int
    private var stopped = false
    private var connection: WebSocketConnection?
    public private(set) var state = LinkState.connecting
    public private(set) var isReady = false
    private var nextRequest = 0
    private var responses: [String: (JSONValue) -> Void] = [:]
    private var backoffMillis = minBackoffMillis
    private var tickIntervalMillis = 30_000
    private var lastFrameAt = Date()
    private var watchdog: TimerID?
    /// The gateway refused a v3 signature once: sign v2 from then on.
    private var signV2 = false
    /// The version the gateway agreed to (3 or 4).
    public private(set) var protocolVersion: Int64 = 0

    public init(
        name: String,
        target: ServiceLoop.ClientTarget,
        identity: AccountIdentity,
        loop: ServiceLoop,
        logger: Logger,
        hello: LinkHello? = nil,
        maxBackoffMillis: Int = 30_000,
        onState: @escaping (LinkState, String) -> Void
    ) {
        self.maxBackoffMillis = maxBackoffMillis
        self.name = name
        self.hello = hello ?? LinkHello(displayName: "clawrelay \(name)")
        self.target = target
        self.identity = identity
        self.loop = loop
        self.logger = logger
        self.onState = onState
    }

    /// Closes the link for good (the device it stood for went away).
    public func stop() {
        stopped = true
        connection?.close(code: 1000)
    }

    public var deviceID: String { identity.deviceID }

    public func connect() {
        guard !stopped else { return }
        if state != .awaitingApproval && state != .badCredentials { report(.connecting, "\(target.host):\(target.port)") }
        loop.connect(to: target, handler: self)
    }

    private func report(_ newState: LinkState, _ detail: String) {
        state = newState
        onState(newState, detail)
    }

    // MARK: ClientHandler

    public func clientConnected(_ connection: WebSocketConnection) {
        self.connection = connection
        lastFrameAt = Date()
    }

    public func client(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        let bytes: [UInt8]
        switch message {
        case .text(let text): bytes = Array(text.utf8)
        case .binary(let data): bytes = data
        }
        lastFrameAt = Date()
        guard let frame = JSONValue.parse(bytes) else { return }
        switch frame["type"]?.stringValue {
        case "event":
            handleEvent(frame["event"]?.stringValue ?? "", frame["payload"] ?? .null)
        case "res":
            if let id = frame["id"]?.stringValue, let handler = responses.removeValue(forKey: id) { handler(frame) }
        default:
            break
        }
    }

    public func clientClosed(_ connection: WebSocketConnection?, error: String?) {
        if let connection, connection !== self.connection { return }
        self.connection = nil
        isReady = false
        responses.removeAll()
        watchdog.map(loop.cancel)
        watchdog = nil
        onDown?()
        guard !stopped else { return }
        scheduleReconnect(reason: error ?? "closed")
    }

    private func scheduleReconnect(reason: String) {
        let jitter = Int.random(in: 0...(backoffMillis / 4))
        let delay = backoffMillis + jitter
        backoffMillis = min(backoffMillis * 2, maxBackoffMillis)
        if state == .connected || state == .connecting { report(.retrying, "\(reason); next try in \(delay) ms") }
        logger.info("upstream link down", metadata: ["account": "\(name)", "state": "\(state.rawValue)", "retry_ms": "\(delay)"])
        loop.schedule(afterMillis: delay) { [weak self] in self?.connect() }
    }

    // MARK: Protocol

    /// Sends a request; `response` gets its `res` frame (not called if the link drops first).
    public func request(_ method: String, _ params: JSONValue, response: @escaping (JSONValue) -> Void) {
        nextRequest += 1
        let id = "r\(nextRequest)"
        responses[id] = response
        connection?.send(text: JSONValue.object(["type": .string("req"), "id": .string(id), "method": .string(method), "params": params]).encoded())
    }

    private func handleEvent(_ name: String, _ payload: JSONValue) {
        switch name {
        case "connect.challenge":
            guard let nonce = payload["nonce"]?.stringValue else { return }
            sendConnect(nonce: nonce)
        default:
            onEvent?(name, payload)
        }
    }

    private func sendConnect(nonce: String) {
        let signedAt = Int64(Date().timeIntervalSince1970 * 1000)
        let token = identity.token
        // `gateway-client` is the id today's gateways know for a program talking to them; the mode
        // says what it is (backend for an operator account, node for a passed-through node).
        let clientID = "gateway-client"
        let fields = DeviceAuth.SignedFields(
            deviceID: identity.deviceID,
            clientID: clientID,
            clientMode: hello.mode,
            role: hello.role,
            scopes: hello.scopes,
            signedAtMillis: signedAt,
            token: token,
            nonce: nonce,
            platform: "linux",
            deviceFamily: ""
        )
        let payload = signV2 ? DeviceAuth.payloadV2(fields) : DeviceAuth.payloadV3(fields)
        var params: [String: JSONValue] = [
            "minProtocol": .int(3), "maxProtocol": .int(4),
            "client": .object([
                "id": .string(clientID), "displayName": .string(hello.displayName), "version": .string("0.2"),
                "platform": .string("linux"), "mode": .string(hello.mode),
            ]),
            "role": .string(hello.role), "scopes": .array(hello.scopes.map(JSONValue.string)), "caps": .array(hello.caps),
            "commands": .array(hello.commands.map(JSONValue.string)), "permissions": hello.permissions,
            "device": .object([
                "id": .string(identity.deviceID), "publicKey": .string(identity.publicKey), "signature": .string(identity.sign(payload)),
                "signedAt": .int(signedAt), "nonce": .string(nonce),
            ]),
        ]
        if !token.isEmpty { params["auth"] = .object(["token": .string(token)]) }
        request("connect", .object(params)) { [weak self] response in self?.connected(response) }
    }

    private func connected(_ response: JSONValue) {
        if response["ok"]?.boolValue == true {
            let payload = response["payload"] ?? .null
            if let token = payload["auth"]?["deviceToken"]?.stringValue { identity.token = token }
            tickIntervalMillis = Int(min(max(payload["policy"]?["tickIntervalMs"]?.intValue ?? 30_000, 1_000), 600_000))
            protocolVersion = payload["protocol"]?.intValue ?? 3
            backoffMillis = Self.minBackoffMillis
            isReady = true
            report(.connected, "\(target.host):\(target.port) (protocol \(protocolVersion))")
            armWatchdog()
            return
        }
        let error = response["error"] ?? .null
        let detailCode = error["details"]?["code"]?.stringValue ?? ""
        if error["code"]?.stringValue == "NOT_PAIRED" {
            let requestID = error["details"]?["requestId"]?.stringValue ?? "?"
            report(.awaitingApproval, "awaiting approval (requestId \(requestID), device \(identity.deviceID))")
        } else if detailCode == "AUTH_DEVICE_TOKEN_MISMATCH" || (detailCode == "AUTH_TOKEN_MISMATCH" && !identity.token.isEmpty) {
            // The gateway no longer takes our device token (rotated or revoked there): drop it and
            // connect again without it, which pairs anew (or reconnects on the key, if still paired).
            identity.token = ""
            backoffMillis = Self.minBackoffMillis
            report(.retrying, "\(detailCode): the gateway refused this account's device token; dropped it and connecting again to pair")
        } else if detailCode == DeviceAuth.Failure.badSignature.rawValue, !signV2 {
            signV2 = true
            backoffMillis = Self.minBackoffMillis
            report(.retrying, "the gateway refused a v3 device signature; trying v2")
        } else {
            report(.badCredentials, "\(error["code"]?.stringValue ?? "error"): \(error["message"]?.stringValue ?? "") \(detailCode)")
        }
        connection?.close(code: 1000)
    }

    /// Two tick intervals without a frame means the link is dead even if TCP has not noticed.
    private func armWatchdog() {
        watchdog.map(loop.cancel)
        watchdog = loop.schedule(afterMillis: tickIntervalMillis) { [weak self] in
            guard let self, isReady else { return }
            if Date().timeIntervalSince(lastFrameAt) * 1000 > Double(2 * tickIntervalMillis) {
                logger.warning("upstream link stalled: no tick", metadata: ["account": "\(name)"])
                connection?.close(code: 4000, reason: "tick timeout")
            } else {
                armWatchdog()
            }
        }
    }
}
