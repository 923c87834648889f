import RelayKit

/// A connected node as `node.list` and `node.describe` show it.
public struct NodeEntry: Codable, Equatable, Sendable {
    public var nodeId: String
    @ExplicitNull public var displayName: String?
    public var platform: String
    public var version: String
    public var caps: [JSONValue]
    public var commands: [String]
    public var permissions: JSONValue
    public var connectedAtMs: Int64
    public var paired = true
    public var connected = true
    /// False after the node said it went to the background.
    public var foreground: Bool

    public init(
        nodeId: String,
        displayName: String?,
        platform: String,
        version: String,
        caps: [JSONValue],
        commands: [String],
        permissions: JSONValue,
        connectedAtMs: Int64,
        foreground: Bool
    ) {
        self.nodeId = nodeId
        self.displayName = displayName
        self.platform = platform
        self.version = version
        self.caps = caps
        self.commands = commands
        self.permissions = permissions
        self.connectedAtMs = connectedAtMs
        self.foreground = foreground
    }
}

public struct NodeList: Codable, Equatable, Sendable {
    public var ts: Int64
    public var nodes: [NodeEntry]

    public init(ts: Int64, nodes: [NodeEntry]) {
        self.ts = ts
        self.nodes = nodes
    }
}

/// `node.describe {nodeId}`.
public struct NodeParams: Codable, Equatable, Sendable {
    public var nodeId: String?
}

/// `node.invoke {nodeId, command, params?, timeoutMs?, idempotencyKey}` (operator.write).
public struct NodeInvokeParams: Codable, Equatable, Sendable {
    public var nodeId: String?
    public var command: String?
    public var params: JSONValue?
    public var timeoutMs: Int64?
    public var idempotencyKey: String?
}

/// `node.invoke`'s answer: what the node returned, parsed, and as it sent it.
public struct NodeInvokeResponse: Codable, Equatable, Sendable {
    public var ok = true
    public var nodeId: String
    public var command: String
    public var payload: JSONValue
    @ExplicitNull public var payloadJSON: String?

    public init(nodeId: String, command: String, payload: JSONValue, payloadJSON: String?) {
        self.nodeId = nodeId
        self.command = command
        self.payload = payload
        self.payloadJSON = payloadJSON
    }
}

/// The `node.invoke.request` event, gateway → node (sent to that node alone: no seq).
public struct NodeInvokeRequest: Codable, Equatable, Sendable {
    public var id: String
    public var nodeId: String?
    public var command: String
    /// The params as a JSON string.
    public var paramsJSON: String?
    public var timeoutMs: Int64?
    public var idempotencyKey: String?

    public init(id: String, nodeId: String, command: String, paramsJSON: String, timeoutMs: Int64, idempotencyKey: String) {
        self.id = id
        self.nodeId = nodeId
        self.command = command
        self.paramsJSON = paramsJSON
        self.timeoutMs = timeoutMs
        self.idempotencyKey = idempotencyKey
    }
}

/// `node.invoke.result {id, nodeId, ok, payloadJSON? | payload?, error?}`, node → gateway.
public struct NodeInvokeResult: Codable, Equatable, Sendable {
    public var id: String?
    public var nodeId: String?
    public var ok: Bool?
    public var payloadJSON: String?
    public var payload: JSONValue?
    /// The node's own `{code, message}`.
    public var error: JSONValue?

    public init(id: String, nodeId: String, ok: Bool, payloadJSON: String? = nil, error: JSONValue? = nil) {
        self.id = id
        self.nodeId = nodeId
        self.ok = ok
        self.payloadJSON = payloadJSON
        self.error = error
    }
}

/// The gateway's answer to a result: `{ok: true}`, with `ignored` for a late or unknown one.
public struct NodeResultAck: Codable, Equatable, Sendable {
    public var ok = true
    public var ignored: Bool?

    public init(ignored: Bool) { self.ignored = ignored ? true : nil }
}

/// `node.event {event, payloadJSON? | payload?}`: `app.state`, `node.presence.alive`, `push.apns.register`.
public struct NodeEventParams: Codable, Equatable, Sendable {
    public var event: String?
    public var payloadJSON: String?
    public var payload: JSONValue?

    /// The payload: `payloadJSON` parsed, else `payload`, else null.
    public var body: JSONValue { payloadJSON.flatMap { JSONValue.parse($0) } ?? payload ?? .null }
}

/// `{ok: true, event, handled, reason?}`.
public struct NodeEventAck: Codable, Equatable, Sendable {
    public var ok = true
    public var event: String
    public var handled: Bool
    public var reason: String?

    public init(event: String, handled: Bool, reason: String?) {
        self.event = event
        self.handled = handled
        self.reason = reason
    }
}

/// A node's error `{code, message?}` (a node may send more; the relay passes on what it sent).
public struct NodeError: Codable, Equatable, Sendable {
    public var code: String
    public var message: String?

    public init(code: String, message: String? = nil) {
        self.code = code
        self.message = message
    }

    /// As `details.nodeError` carries it.
    public var json: JSONValue { GatewayJSON.value(self) }
}

/// `node.event app.state {state: "background" | "foreground"}`.
public struct AppState: Codable, Equatable, Sendable {
    public var state: String?
}

/// `node.event push.apns.register {token, topic, environment, transport?}`.
public struct APNsRegistration: Codable, Equatable, Sendable {
    public var token: String?
    public var topic: String?
    public var environment: String?
    /// direct (when absent) or relay.
    public var transport: String?
}
