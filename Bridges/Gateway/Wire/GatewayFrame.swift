import RelayKit

/// `{type:"req", id, method, params?}`. Typed params to write; `GatewayRequest<JSONValue>` to read
/// any request, then `params(as:)` for the method's own.
public struct GatewayRequest<Params: Codable & Equatable & Sendable>: Codable, Equatable, Sendable {
    public var type = "req"
    public var id: String
    public var method: String
    public var params: Params?

    public init(id: String, method: String, params: Params) {
        self.id = id
        self.method = method
        self.params = params
    }
}

/// `{type:"res", id, ok, payload?, error?}`: an answer carries its payload (even `null`), a
/// refusal its error.
public struct GatewayResponse<Payload: Codable & Equatable & Sendable>: Codable, Equatable, Sendable {
    public var type = "res"
    public var id: String
    public var ok: Bool
    public var payload: Payload?
    public var error: GatewayError?

    public init(id: String, payload: Payload) {
        self.id = id
        ok = true
        self.payload = payload
    }

    public init(id: String, error: GatewayError) {
        self.id = id
        ok = false
        self.error = error
    }
}

/// `{type:"event", event, payload?, seq?, stateVersion?}`. `seq` numbers the events one socket
/// is sent; an event sent to a single socket (the challenge, an invoke for a node) has none.
public struct GatewayEvent<Payload: Codable & Equatable & Sendable>: Codable, Equatable, Sendable {
    public var type = "event"
    public var event: String
    public var payload: Payload?
    public var seq: Int64?
    public var stateVersion: StateVersion?

    public init(_ event: String, _ payload: Payload, seq: Int64? = nil, stateVersion: StateVersion? = nil) {
        self.event = event
        self.payload = payload
        self.seq = seq
        self.stateVersion = stateVersion
    }
}

/// `{}`: the params of a method that takes none.
public struct NoParams: Codable, Equatable, Sendable {
    public init() {}
}

/// `stateVersion {presence, health}`: how many times each changed since the gateway started.
public struct StateVersion: Codable, Equatable, Sendable {
    public var presence: Int64
    public var health: Int64

    public init(presence: Int64, health: Int64) {
        self.presence = presence
        self.health = health
    }
}

/// Any frame, read: what a client of a gateway (the relay's upstream links, `clawrelay chat`)
/// takes from the socket.
public enum GatewayFrame: Equatable, Sendable {
    case request(GatewayRequest<JSONValue>)
    case response(GatewayResponse<JSONValue>)
    case event(GatewayEvent<JSONValue>)

    /// Nil for JSON that is none of the three (an unknown type, a `res` without id).
    public init?(_ json: JSONValue) {
        switch json["type"]?.stringValue {
        case "req":
            guard let request = GatewayJSON.decode(GatewayRequest<JSONValue>.self, from: json) else { return nil }
            self = .request(request)
        case "res":
            guard let response = GatewayJSON.decode(GatewayResponse<JSONValue>.self, from: json) else { return nil }
            self = .response(response)
        case "event":
            // A nameless event is still an event (its name reads as "").
            self = .event(GatewayJSON.decode(GatewayEvent<JSONValue>.self, from: json) ?? GatewayEvent("", json["payload"] ?? .null))
        default: return nil
        }
    }
}

/// Why a frame that came in is not a request the gateway can answer.
public enum GatewayFrameRefusal: Error, Equatable, Sendable {
    /// Not JSON (or nested too deep, or with a lone surrogate).
    case notJSON
    /// JSON, but not `{type:"req", id, method}`; `id` when it had a usable one to answer.
    case notARequest(id: String?)
}

extension GatewayRequest where Params == JSONValue {
    /// A request from a client's frame (text or binary, as bytes), never touching a socket. The
    /// same reading as `Decodable`, taken straight from the parsed object: every frame a client
    /// sends comes through here.
    public static func decode(_ bytes: [UInt8]) -> Result<GatewayRequest<JSONValue>, GatewayFrameRefusal> {
        guard let json = JSONValue.parse(bytes) else { return .failure(.notJSON) }
        guard case .object(let fields) = json, fields["type"]?.stringValue == "req", let id = fields["id"]?.stringValue,
            let method = fields["method"]?.stringValue
        else {
            let id = json["id"]?.stringValue.flatMap { !$0.isEmpty && $0.utf8.count <= 256 ? $0 : nil }
            return .failure(.notARequest(id: id))
        }
        var request = GatewayRequest(id: id, method: method, params: JSONValue.null)
        request.params = fields["params"]
        return .success(request)
    }

    /// The method's params (a missing or non-object `params` reads as `{}`).
    public func params<T: Decodable>(as type: T.Type) -> T? {
        GatewayJSON.decode(type, from: params.flatMap { $0.objectValue == nil ? nil : $0 } ?? .object([:]))
    }

    /// The params as an object, for methods that check which keys were sent.
    public var fields: [String: JSONValue] { params?.objectValue ?? [:] }
}

/// The frames on the hot path (every event a socket is sent), written by hand: byte for byte
/// what `GatewayJSON.encode(GatewayEvent(…))` writes, from a payload encoded once for every
/// socket it goes to.
public enum GatewayFastFrames {
    public static func event(_ name: String, payloadJSON: String, seq: Int64, stateVersionJSON: String? = nil) -> String {
        var frame = #"{"event":"#
        frame.reserveCapacity(payloadJSON.utf8.count + name.utf8.count + 64)
        frame += quoted(name)
        frame += #","payload":"#
        frame += payloadJSON
        frame += #","seq":"#
        frame += String(seq)
        if let stateVersionJSON {
            frame += #","stateVersion":"#
            frame += stateVersionJSON
        }
        frame += #","type":"event"}"#
        return frame
    }

    /// An event name as a JSON string: the protocol's names need no escape; any other goes
    /// through the encoder.
    static func quoted(_ name: String) -> String {
        let plain = name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2E || byte == 0x2D
                || byte == 0x5F
        }
        return plain ? "\"" + name + "\"" : JSONValue.string(name).encoded()
    }
}
