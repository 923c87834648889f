/// A paired device as stored.
public struct DeviceRecord: Sendable, Equatable {
    public enum Status: String, Sendable {
        case approved
        /// Revoked (`clawrelay devices revoke`): its tokens stop working and its pairing requests
        /// are refused until `clawrelay devices allow` makes it `unpaired`.
        case revoked
        /// On the denylist: pairing answers `pair_rejected`.
        case denied
        /// No longer paired (revoked and then allowed again, or removed by a gateway operator): it
        /// may ask to pair again, and its request waits for approval like a new device's.
        case unpaired

        /// Revoked or denylisted: the device's pairing requests are refused.
        public var refusesPairing: Bool { self == .revoked || self == .denied }
    }

    public var id: String
    public var userID: String
    public var protocolName: String
    public var claimedName: String?
    public var deviceInfoJSON: String?
    public var isAdmin: Bool
    public var status: Status
    public var tokenHash: String?
    public var tokenDelivered: Bool
    public var createdAt: Int64
    public var lastSeenAt: Int64?
    /// Gateway devices: the raw Ed25519 key (base64url), the granted role and scopes.
    public var publicKey: String?
    public var role: String?
    public var scopes: [String] = []
    /// Gateway devices: every role approved (`role` holds them comma-separated).
    public var roles: Set<String> {
        get { Set((role ?? "").split(separator: ",").map(String.init)) }
        set { role = newValue.isEmpty ? nil : newValue.sorted().joined(separator: ",") }
    }
    /// Foreground, background or offline, as the running relay last saw it.
    public var presence = "offline"

    public init(
        id: String,
        userID: String,
        protocolName: String = "clawline",
        claimedName: String?,
        deviceInfoJSON: String?,
        isAdmin: Bool,
        status: Status,
        tokenHash: String?,
        tokenDelivered: Bool,
        createdAt: Int64,
        lastSeenAt: Int64?
    ) {
        self.id = id
        self.userID = userID
        self.protocolName = protocolName
        self.claimedName = claimedName
        self.deviceInfoJSON = deviceInfoJSON
        self.isAdmin = isAdmin
        self.status = status
        self.tokenHash = tokenHash
        self.tokenDelivered = tokenDelivered
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
    }
}
