import GRDB
import RelayCore

/// The operator commands' store on `relay.sqlite` (the embedded default), over the store's own
/// queries; writes go through SQLite's lock beside a running relay's writer.
public final class SQLiteOperatorStore: OperatorStore {
    let store: Store

    /// Opens (and migrates) the data directory's `relay.sqlite`.
    public init(dataDirectory: String) throws {
        store = try Store(dataDirectory: dataDirectory, executor: nil)
    }

    public func resolve(_ given: String, as kind: OperatorID.Kind) throws -> String {
        try store.read { try IDLookup.resolve($0, given, as: kind) }
    }

    public func devices() throws -> [DeviceRecord] { try store.read { try DeviceQueries.all($0) } }

    /// One relay on SQLite: `devices.presence` is its word.
    public func clusterPresence() throws -> [String: ClusterPresence]? { nil }

    public func pendingPairings() throws -> [PendingPairing] { try store.read { try OperatorQueries.pendingPairings($0) } }

    public func queueDepths(at millis: Int64) throws -> [String: Int] { try store.read { try QueueQueries.depths($0, at: millis) } }

    public func pushTargetListing() throws -> [String: [PushTargetListing]] {
        try store.read { try PushTargetQueries.listing($0) }.mapValues { entries in
            entries.map { PushTargetListing(target: $0.target, retiredAt: $0.retiredAt, reason: $0.reason) }
        }
    }

    public func setStatus(deviceID: String, _ status: DeviceRecord.Status) throws -> Bool {
        try store.write { try DeviceQueries.setStatus($0, id: deviceID, status) }
    }

    public func allow(deviceID: String) throws -> DeviceRecord? {
        try store.write { db -> DeviceRecord? in
            guard let device = try DeviceQueries.fetch(db, id: deviceID), device.status.refusesPairing else { return nil }
            _ = try DeviceQueries.setStatus(db, id: deviceID, device.status == .denied ? .approved : .unpaired)
            return device
        }
    }

    public func setAdmin(deviceID: String, _ isAdmin: Bool) throws -> Bool {
        try store.write { try DeviceQueries.setAdmin($0, id: deviceID, isAdmin) }
    }

    public func setPushTarget(deviceID: String, kind: String, token: String, at millis: Int64) throws -> Bool {
        try store.write { db -> Bool in
            guard try DeviceQueries.fetch(db, id: deviceID)?.status == .approved else { return false }
            try PushTargetQueries.upsert(db, deviceID: deviceID, kind: kind, token: token, platform: "cli", at: millis)
            return true
        }
    }

    public func removePushTarget(deviceID: String, kind: String) throws -> Bool {
        try store.write { db -> Bool in
            guard try DeviceQueries.fetch(db, id: deviceID)?.status == .approved else { return false }
            return try PushTargetQueries.remove(db, deviceID: deviceID, kind: kind)
        }
    }

    public func enqueue(_ action: OperatorCommand.Action, deviceID: String, userID: String?, at millis: Int64) throws -> Int64 {
        try store.write { try OperatorQueries.enqueue($0, action: action, deviceID: deviceID, userID: userID, at: millis) }
    }

    public func result(ofCommand id: Int64) throws -> String? { try store.read { try OperatorQueries.result($0, id: id) } }

    public func accounts() throws -> [AccountStatus] { try store.read { try AccountQueries.all($0) } }

    public func approvals(pendingOnly: Bool, limit: Int) throws -> [ApprovalRow] {
        try store.read { try UsageQueries.approvals($0, pendingOnly: pendingOnly, limit: limit) }
    }

    public func conversations(userID: String?, limit: Int) throws -> [(conversation: Conversation, events: Int)] {
        try store.read { db in
            try (userID.map { try ConversationQueries.list(db, userID: $0, limit: limit) } ?? ConversationQueries.all(db, limit: limit))
                .map { (conversation: $0, events: try EventQueries.count(db, conversationID: $0.id)) }
        }
    }

    public func conversation(id: String, events limit: Int) throws -> ConversationDetail? {
        try store.read { db -> ConversationDetail? in
            guard let conversation = try ConversationQueries.fetch(db, id: id) else { return nil }
            let events = try EventQueries.conversation(db, userID: conversation.userID, conversationID: id, limit: limit)
            return ConversationDetail(conversation: conversation, events: events, usage: try UsageQueries.totals(db, conversationID: id))
        }
    }

    public func bind(conversationID: String, backend: String, at millis: Int64) throws -> Bool {
        try store.write { db in
            try ConversationQueries.update(db, id: conversationID) { ConversationEdit.rebind(backend: backend).apply(to: &$0, at: millis) }
        } != nil
    }

    public func addPairingLink(tokenHash: String, expiresAt: Int64) throws -> String {
        try store.write { db -> String in
            try PairingLinkQueries.addLink(db, tokenHash: tokenHash, expiresAt: expiresAt)
            return try PairingLinkQueries.fingerprint(db)
        }
    }

    public func pushAttempts(since: Int64?, deviceID: String?, afterID: Int64, limit: Int, newest: Bool) throws -> [PushAttemptRow] {
        try store.read { db in
            try PushTargetQueries.attempts(db, since: since, deviceID: deviceID, afterID: afterID, limit: limit, newest: newest)
        }.map { PushAttemptRow(id: $0.id, userID: $0.userID, attempt: $0.attempt) }
    }

    public func close() { store.close() }
}
