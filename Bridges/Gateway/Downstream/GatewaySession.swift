import RelayCore
import RelayTransport

/// One gateway socket: the challenge it was sent, then who it is once `connect` succeeded.
final class GatewaySession: DeviceEndpoint {
    let connection: WebSocketConnection
    let nonce = Identifiers.newUUID()
    let openedAt: Int64
    var handshakeTimer: TimerID?
    var isConnected = false
    /// The protocol version agreed at connect (3 or 4).
    var protocolVersion: Int64 = 3
    /// The connect presented a device token (only such a socket is shown a token it rotates itself).
    var usedDeviceToken = false
    var deviceFamily: String?
    var deviceID = ""
    var role = "operator"
    var scopes: Set<String> = []
    var clientID = ""
    var clientMode = ""
    var displayName: String?
    var platform = ""
    var version = ""
    var caps: [JSONValue] = []
    var commands: [String] = []
    var permissions: JSONValue = .object([:])
    var connectedAt: Int64 = 0
    /// A node that said it is in the background (an `app.state` event, or NODE_BACKGROUND_UNAVAILABLE).
    var isBackground = false
    /// Invokes held for this node until it comes back to the foreground.
    var heldInvokes: [() -> Void] = []
    /// The last event seq sent on this socket: every socket numbers its own events 1, 2, 3, …
    var eventSeq = 0
    /// On the core's bus and counted in its device's presence.
    var isAttached = false
    weak var downstream: GatewayDownstream?

    init(connection: WebSocketConnection, openedAt: Int64) {
        self.connection = connection
        self.openedAt = openedAt
    }

    var isNode: Bool { role == "node" }

    /// `operator.admin` passes every scope check.
    func has(_ scope: String) -> Bool { scopes.contains(scope) || scopes.contains("operator.admin") }

    func send(_ text: String) { connection.send(text: text) }

    func deliver(_ event: BusEvent) { downstream?.deliverChat(event, to: self) }

    /// An event frame with this socket's next seq.
    func event(_ name: String, _ payload: JSONValue, stateVersion: JSONValue? = nil) -> String {
        event(name, payloadJSON: payload.encoded(), stateVersion: stateVersion?.encoded())
    }

    /// The same from a payload already encoded (once for every socket it goes to).
    func event(_ name: String, payloadJSON: String, stateVersion: String? = nil) -> String {
        eventSeq += 1
        return GatewayFrame.event(name, payloadJSON: payloadJSON, seq: eventSeq, stateVersionJSON: stateVersion)
    }

    func fail(_ requestID: String?, _ error: GatewayError, close code: UInt16?) {
        if let requestID { send(GatewayFrame.error(requestID, error)) }
        connection.logFailure(
            downstream?.logger,
            protocol: "gateway",
            device: deviceID,
            code: error.code.rawValue,
            message: error.message,
            closingWith: code
        )
        if let code { connection.close(code: code, reason: error.code.rawValue) }
    }

    /// The node as `node.list` and `node.describe` show it.
    func nodeJSON(paired: Bool = true) -> JSONValue {
        .object([
            "nodeId": .string(deviceID), "displayName": displayName.map(JSONValue.string) ?? .null, "platform": .string(platform),
            "version": .string(version), "caps": .array(caps), "commands": .array(commands.map(JSONValue.string)),
            "permissions": permissions, "connectedAtMs": .int(connectedAt), "paired": .bool(paired), "connected": .bool(true),
            "foreground": .bool(!isBackground),
        ])
    }
}

/// A device waiting for an operator to approve it.
struct PendingDevice {
    var requestID: String
    var deviceID: String
    var publicKey: String
    var role: String
    var scopes: [String]
    var displayName: String?
    var platform: String
    var clientID: String
    var clientMode: String
    var remoteIP: String
    var createdAt: Int64
    var timer: TimerID?

    var json: JSONValue {
        .object([
            "requestId": .string(requestID), "deviceId": .string(deviceID), "publicKey": .string(publicKey),
            "displayName": displayName.map(JSONValue.string) ?? .null, "platform": .string(platform), "clientId": .string(clientID),
            "clientMode": .string(clientMode), "role": .string(role), "scopes": .array(scopes.map(JSONValue.string)),
            "remoteIp": .string(remoteIP), "ts": .int(createdAt),
        ])
    }
}
