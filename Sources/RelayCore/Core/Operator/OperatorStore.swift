/// What the operator commands (`clawrelay devices`, `accounts`, `conversations`, `approvals`,
/// `pair-link`, `audit --protocol push`) read and write, whichever database holds the relay's
/// store: SQLite (`RelayStore`) or PostgreSQL (`RelayStorePostgres`). Each store module
/// implements it over its own queries; the commands see only this.
///
/// - Important: every call is synchronous and blocks the calling thread (a command-line tool's
///   main thread, never a loop or a task): it returns once the database answered.
public protocol OperatorStore: AnyObject {
    /// The whole id `given` names (`OperatorID`'s grammar: a whole id, or a unique prefix of
    /// `OperatorID.minimumPrefix` characters or more); an id no record has comes back as given.
    func resolve(_ given: String, as kind: OperatorID.Kind) throws -> String

    /// Every stored device.
    func devices() throws -> [DeviceRecord]
    /// In a cluster (a database whose nodes registered): each device's presence over the live
    /// nodes, by device (a device no live node holds is absent: offline); nil off a cluster, where
    /// `DeviceRecord.presence` is the running relay's.
    func clusterPresence() throws -> [String: ClusterPresence]?
    /// Pairing requests the running relay waits on, oldest first.
    func pendingPairings() throws -> [PendingPairing]
    /// Unexpired notification queue entries per device (devices without any are left out).
    func queueDepths(at millis: Int64) throws -> [String: Int]
    /// Every push target by device, retired ones included, tokens redacted.
    func pushTargetListing() throws -> [String: [PushTargetListing]]

    /// Sets a device's status; false when there is no such device.
    func setStatus(deviceID: String, _ status: DeviceRecord.Status) throws -> Bool
    /// Undoes a denial (approved again) or a revocation (unpaired); the record as it was, nil
    /// when the device is neither denied nor revoked (then nothing changes).
    func allow(deviceID: String) throws -> DeviceRecord?
    /// Makes an approved device an admin, or not; false when there is no such approved device.
    func setAdmin(deviceID: String, _ isAdmin: Bool) throws -> Bool
    /// Gives an approved device a push target of `kind` (replacing its last one); false when
    /// there is no such approved device.
    func setPushTarget(deviceID: String, kind: String, token: String, at millis: Int64) throws -> Bool
    /// Takes an approved device's target of `kind` away; false when it had none (or is not approved).
    func removePushTarget(deviceID: String, kind: String) throws -> Bool

    /// Queues a command for the running relay; returns its id.
    func enqueue(_ action: OperatorCommand.Action, deviceID: String, userID: String?, at millis: Int64) throws -> Int64
    /// The command's result once the relay ran it, else nil.
    func result(ofCommand id: Int64) throws -> String?

    /// The upstream accounts' link state as the running relay last reported it.
    func accounts() throws -> [AccountStatus]
    /// Approvals, newest first: the pending ones (`pendingOnly`) or all, at most `limit`.
    func approvals(pendingOnly: Bool, limit: Int) throws -> [ApprovalRow]

    /// Conversations (one user's, or everyone's), most recently active first, each with how
    /// many events it holds.
    func conversations(userID: String?, limit: Int) throws -> [(conversation: Conversation, events: Int)]
    /// One conversation, its last `limit` events (oldest first) and its usage; nil when there
    /// is none.
    func conversation(id: String, events limit: Int) throws -> ConversationDetail?
    /// Binds a conversation to a backend; false when there is no such conversation.
    func bind(conversationID: String, backend: String, at millis: Int64) throws -> Bool

    /// Stores a one-time pairing link (only its token's hash); returns the gateway fingerprint
    /// the link carries.
    func addPairingLink(tokenHash: String, expiresAt: Int64) throws -> String
    /// Push attempts in id order: the first `limit` after `afterID`, or with `newest` the last
    /// `limit`; `deviceID` is a whole id or a prefix (`OperatorID.minimumPrefix` characters or more).
    func pushAttempts(since: Int64?, deviceID: String?, afterID: Int64, limit: Int, newest: Bool) throws -> [PushAttemptRow]

    /// Each cluster node's data directory (where its audit stays), by node id; empty for a relay
    /// on its own.
    func nodeDataDirectories() throws -> [String: String]

    /// Closes the connection (or file).
    func close()
}

extension OperatorStore {
    /// A store without a cluster knows no node's directory.
    public func nodeDataDirectories() throws -> [String: String] { [:] }
}
