/// A gateway device's token for one role (stored as a SHA-256 hash).
public struct DeviceToken: Sendable, Equatable {
    public var deviceID: String
    public var role: String
    /// nil once revoked.
    public var tokenHash: String?
    public var scopes: [String]
    public var issuedAt: Int64
    public var revokedAt: Int64?

    public init(deviceID: String, role: String, tokenHash: String?, scopes: [String], issuedAt: Int64, revokedAt: Int64? = nil) {
        self.deviceID = deviceID
        self.role = role
        self.tokenHash = tokenHash
        self.scopes = scopes
        self.issuedAt = issuedAt
        self.revokedAt = revokedAt
    }
}
