import RelayKit

/// `connect` params: who the client is, the role and scopes it asks for, its credentials and its
/// signed device identity. Read tolerantly (every field may be missing; the gateway says which
/// one it needs), written by the relay's upstream links and the bench with `signed(…)`.
public struct ConnectParams: Codable, Equatable, Sendable {
    public struct Client: Codable, Equatable, Sendable {
        public var id: String?
        public var displayName: String?
        public var version: String?
        public var platform: String?
        public var deviceFamily: String?
        public var modelIdentifier: String?
        /// webchat, cli, ui, backend, node, probe, test (and worker).
        public var mode: String?
        public var instanceId: String?

        public init(id: String, displayName: String? = nil, version: String, platform: String, mode: String, deviceFamily: String? = nil) {
            self.id = id
            self.displayName = displayName
            self.version = version
            self.platform = platform
            self.mode = mode
            self.deviceFamily = deviceFamily
        }
    }

    public struct Auth: Codable, Equatable, Sendable {
        public var token: String?
        public var deviceToken: String?
        public var bootstrapToken: String?
        public var password: String?

        public init(token: String? = nil, deviceToken: String? = nil, password: String? = nil) {
            self.token = token
            self.deviceToken = deviceToken
            self.password = password
        }

        /// The token the device signs: `token ?? deviceToken ?? bootstrapToken ?? ""`.
        public var signedToken: String { token ?? deviceToken ?? bootstrapToken ?? "" }
    }

    /// The device's Ed25519 identity and its signature over the challenge (`DeviceAuth`).
    public struct Device: Codable, Equatable, Sendable {
        public var id: String?
        public var publicKey: String?
        public var signature: String?
        public var signedAt: Int64?
        public var nonce: String?

        public init(id: String, publicKey: String, signature: String, signedAt: Int64, nonce: String) {
            self.id = id
            self.publicKey = publicKey
            self.signature = signature
            self.signedAt = signedAt
            self.nonce = nonce
        }
    }

    public var minProtocol: Int64?
    public var maxProtocol: Int64?
    public var client: Client?
    /// "operator" (when absent) or "node".
    public var role: String?
    public var scopes: [String]?
    public var caps: [JSONValue]?
    public var commands: [String]?
    public var permissions: JSONValue?
    public var auth: Auth?
    public var locale: String?
    public var userAgent: String?
    public var device: Device?

    public init() {}

    /// A signed `connect` answering `nonce`: the signature covers the v3 payload (v2 when
    /// `signsV2`), with `token` as `auth.token` when there is one.
    public static func signed(
        client: Client,
        role: String,
        scopes: [String],
        protocols: ClosedRange<Int64>,
        token: String,
        device: (id: String, publicKey: String),
        signedAt: Int64,
        nonce: String,
        signsV2: Bool = false,
        sign: (String) -> String
    ) -> ConnectParams {
        let fields = DeviceAuth.SignedFields(
            deviceID: device.id,
            clientID: client.id ?? "",
            clientMode: client.mode ?? "",
            role: role,
            scopes: scopes,
            signedAtMillis: signedAt,
            token: token,
            nonce: nonce,
            platform: client.platform ?? "",
            deviceFamily: client.deviceFamily ?? ""
        )
        var params = ConnectParams()
        params.minProtocol = protocols.lowerBound
        params.maxProtocol = protocols.upperBound
        params.client = client
        params.role = role
        params.scopes = scopes
        params.auth = token.isEmpty ? nil : Auth(token: token)
        let signature = sign(signsV2 ? DeviceAuth.payloadV2(fields) : DeviceAuth.payloadV3(fields))
        params.device = Device(id: device.id, publicKey: device.publicKey, signature: signature, signedAt: signedAt, nonce: nonce)
        return params
    }

    /// What a connect may carry: (path, largest string in bytes or largest count). A pending
    /// pairing request keeps these, so an unauthenticated client cannot make it hold much.
    public static let fieldLimits: [(path: [String], limit: Int)] = [
        (["client", "id"], 128), (["client", "version"], 64), (["client", "platform"], 64), (["client", "mode"], 32),
        (["client", "displayName"], 256), (["client", "deviceFamily"], 64), (["client", "modelIdentifier"], 128),
        (["client", "instanceId"], 128), (["role"], 32), (["scopes"], 64), (["commands"], 512), (["caps"], 128),
        (["device", "id"], 256), (["device", "publicKey"], 256), (["device", "signature"], 512), (["device", "nonce"], 256),
    ]

    /// The first field of the connect's raw params past its limit (strings by bytes, arrays by
    /// count and each item by 256 bytes, `permissions` by 16 KiB encoded), or nil.
    public static func oversizedField(in params: JSONValue) -> String? {
        for (path, limit) in fieldLimits {
            var value: JSONValue? = params
            for key in path { value = value?[key] }
            switch value {
            case .string(let text)? where text.utf8.count > limit: return path.joined(separator: ".")
            case .array(let items)? where items.count > limit || items.contains(where: { ($0.stringValue?.utf8.count ?? 0) > 256 }):
                return path.joined(separator: ".")
            default: continue
            }
        }
        if let permissions = params["permissions"], permissions.encoded().utf8.count > 16 * 1024 { return "permissions" }
        return nil
    }
}

/// `connect.challenge {nonce, ts}`: the gateway speaks first; the client signs the nonce.
public struct ConnectChallenge: Codable, Equatable, Sendable {
    public var nonce: String
    public var ts: Int64?

    public init(nonce: String, ts: Int64) {
        self.nonce = nonce
        self.ts = ts
    }
}
