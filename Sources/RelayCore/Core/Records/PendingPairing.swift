/// A pending pairing request as the relay mirrors it for `clawrelay devices list`.
public struct PendingPairing: Sendable, Equatable {
    public var protocolName = "clawline"
    public var requestID: String?
    public var deviceID: String
    public var claimedName: String?
    public var deviceInfoJSON: String?
    /// Why the device must be approved, in its protocol's words, if it says.
    public var reason: String?
    public var createdAt: Int64
    public var expiresAt: Int64

    public init(
        protocolName: String = "clawline",
        requestID: String? = nil,
        deviceID: String,
        claimedName: String?,
        deviceInfoJSON: String?,
        reason: String? = nil,
        createdAt: Int64,
        expiresAt: Int64
    ) {
        self.protocolName = protocolName
        self.requestID = requestID
        self.deviceID = deviceID
        self.claimedName = claimedName
        self.deviceInfoJSON = deviceInfoJSON
        self.reason = reason
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}
