import GRDB
import RelayCore

extension StoreJournal: DeviceJournal {
    public func device(id: String, completion: @escaping (Result<DeviceRecord?, any Error>) -> Void) {
        store.read({ db in try DeviceQueries.fetch(db, id: id) }, completion: completion)
    }

    public func device(tokenHash: String, protocolName: String, completion: @escaping (Result<DeviceRecord?, any Error>) -> Void) {
        store.read({ db in try DeviceQueries.fetch(db, tokenHash: tokenHash, protocolName: protocolName) }, completion: completion)
    }

    public func devices(protocolName: String?, completion: @escaping (Result<[DeviceRecord], any Error>) -> Void) {
        store.read({ db in try DeviceQueries.all(db).filter { protocolName == nil || $0.protocolName == protocolName } }, completion: completion)
    }

    public func updateDevice<R: Sendable>(
        _ request: DeviceSnapshot.Request,
        _ change: @escaping @Sendable (inout DeviceSnapshot) throws -> R,
        completion: @escaping (Result<R, any Error>) -> Void
    ) {
        let now = clock.nowMillis()
        store.perform(
            { db in
                let before = try Self.snapshot(db, request, now: now)
                var after = before
                let result = try change(&after)
                try Self.store(after.changes(from: before), db, request: request, now: now)
                return result
            },
            completion: completion
        )
    }

    public func recordSeen(_ seen: [String: Int64]) {
        background("record when devices were last seen") { db in
            for (id, millis) in seen { try DeviceQueries.touch(db, id: id, at: millis) }
        }
    }

    public func savePendingPairing(_ pairing: PendingPairing) {
        background("mirror a pending pairing request") { db in try OperatorQueries.upsertPending(db, pairing) }
    }

    public func removePendingPairing(deviceID: String, protocolName: String) {
        background("remove a pending pairing request") { db in try OperatorQueries.removePending(db, deviceID: deviceID, protocolName: protocolName) }
    }

    static func snapshot(_ db: Database, _ request: DeviceSnapshot.Request, now: Int64) throws -> DeviceSnapshot {
        let id = request.deviceID
        var tokens: [String: DeviceToken] = [:]
        for token in try DeviceTokenQueries.all(db, deviceID: id) { tokens[token.role] = token }
        return DeviceSnapshot(
            deviceID: id,
            device: try DeviceQueries.fetch(db, id: id),
            tokens: tokens,
            bots: try PairingLinkQueries.bots(db, deviceID: id),
            adminExists: request.adminExists ? try DeviceQueries.hasAdmin(db) : false,
            userDeviceCount: try request.countDevicesOf.map { try DeviceQueries.count(db, userID: $0.userID, protocolName: $0.protocolName) } ?? 0,
            pairLinkUsable: try request.pairLinkHash.map { try PairingLinkQueries.isUsable(db, tokenHash: $0, now: now) } ?? false
        )
    }

    static func store(_ changes: DeviceChangeSet, _ db: Database, request: DeviceSnapshot.Request, now: Int64) throws {
        guard !changes.isEmpty else { return }
        if let device = changes.device { try DeviceQueries.insert(db, device) }
        for token in changes.tokens { try DeviceTokenQueries.store(db, token) }
        for role in changes.removedRoles { try DeviceTokenQueries.delete(db, deviceID: changes.deviceID, role: role) }
        for (bot, hash) in changes.bots { try PairingLinkQueries.setBotToken(db, deviceID: changes.deviceID, botID: bot, tokenHash: hash, now: now) }
        if !changes.removedBots.isEmpty { _ = try PairingLinkQueries.removeBots(db, deviceID: changes.deviceID, botIDs: changes.removedBots) }
        if changes.consumesPairLink, let hash = request.pairLinkHash { _ = try PairingLinkQueries.consumeLink(db, tokenHash: hash, now: now) }
    }
}

extension StoreJournal: AssetJournal, AccountJournal {
    public func saveAsset(_ asset: AssetRecord, completion: @escaping (Result<Void, any Error>) -> Void) {
        store.perform({ db in try AssetQueries.insert(db, asset) }, completion: completion)
    }

    public func asset(id: String, completion: @escaping (Result<AssetRecord?, any Error>) -> Void) {
        store.read({ db in try AssetQueries.fetch(db, id: id) }, completion: completion)
    }

    public func recordAccount(_ status: AccountStatus) {
        background("record an upstream account's state") { db in try AccountQueries.record(db, status) }
    }

    public func forgetAccount(_ name: String) {
        background("forget a removed upstream account") { db in try AccountQueries.delete(db, name: name) }
    }
}
