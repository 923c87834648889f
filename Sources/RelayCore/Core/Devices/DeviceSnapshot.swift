/// One device's stored state as one value: a protocol decides what a pairing, a connect or a
/// token change does to it as a pure function of the snapshot (`Devices.update`), and the journal
/// reads the snapshot and stores what the function changed in one transaction.
public struct DeviceSnapshot: Sendable, Equatable {
    /// What to read besides the device's record, tokens and bot pairings.
    public struct Request: Sendable, Equatable {
        public var deviceID: String
        /// Read whether an approved admin device exists anywhere (the first Clawline device becomes one).
        public var adminExists: Bool
        /// Count the approved devices of this user that speak this protocol.
        public var countDevicesOf: UserDevices?
        /// Look up a one-time pairing link (`clawrelay pair-link`) by its token's SHA-256.
        public var pairLinkHash: String?

        public init(deviceID: String, adminExists: Bool = false, countDevicesOf: UserDevices? = nil, pairLinkHash: String? = nil) {
            self.deviceID = deviceID
            self.adminExists = adminExists
            self.countDevicesOf = countDevicesOf
            self.pairLinkHash = pairLinkHash
        }
    }

    /// A user's devices of one protocol.
    public struct UserDevices: Sendable, Equatable {
        public var userID: String
        public var protocolName: String

        public init(userID: String, protocolName: String) {
            self.userID = userID
            self.protocolName = protocolName
        }
    }

    public let deviceID: String
    /// The device's record; nil while the relay does not know it. Setting it stores it (a record
    /// is never deleted: revoking one changes its status).
    public var device: DeviceRecord?
    /// Per-role tokens (gateway devices), by role; a role taken out is deleted.
    public var tokens: [String: DeviceToken]
    /// Per-bot token hashes of `device.pair`, by bot id; a bot taken out is unpaired.
    public var bots: [String: String]
    /// Whether an approved admin device existed when read (only when the request asked).
    public let adminExists: Bool
    /// The approved devices of the requested user and protocol when read (0 unless asked).
    public let userDeviceCount: Int
    /// Whether the requested pairing link was known, unused and unexpired when read.
    public let pairLinkUsable: Bool
    /// Set to mark the requested pairing link used.
    public var consumesPairLink = false

    public init(
        deviceID: String,
        device: DeviceRecord?,
        tokens: [String: DeviceToken] = [:],
        bots: [String: String] = [:],
        adminExists: Bool = false,
        userDeviceCount: Int = 0,
        pairLinkUsable: Bool = false
    ) {
        self.deviceID = deviceID
        self.device = device
        self.tokens = tokens
        self.bots = bots
        self.adminExists = adminExists
        self.userDeviceCount = userDeviceCount
        self.pairLinkUsable = pairLinkUsable
    }

    /// What changed from `before` to this snapshot, for a journal to store.
    public func changes(from before: DeviceSnapshot) -> DeviceChangeSet {
        var set = DeviceChangeSet(deviceID: deviceID)
        if device != before.device { set.device = device }
        for (role, token) in tokens where before.tokens[role] != token { set.tokens.append(token) }
        set.removedRoles = before.tokens.keys.filter { tokens[$0] == nil }.sorted()
        for (bot, hash) in bots where before.bots[bot] != hash { set.bots[bot] = hash }
        set.removedBots = before.bots.keys.filter { bots[$0] == nil }.sorted()
        set.consumesPairLink = consumesPairLink && before.pairLinkUsable
        return set
    }
}

/// What one `Devices.update` stores.
public struct DeviceChangeSet: Sendable, Equatable {
    public var deviceID: String
    /// The record to store (insert or replace), when it changed.
    public var device: DeviceRecord?
    public var tokens: [DeviceToken] = []
    public var removedRoles: [String] = []
    public var bots: [String: String] = [:]
    public var removedBots: [String] = []
    public var consumesPairLink = false

    public init(deviceID: String) { self.deviceID = deviceID }

    public var isEmpty: Bool {
        device == nil && tokens.isEmpty && removedRoles.isEmpty && bots.isEmpty && removedBots.isEmpty && !consumesPairLink
    }
}
