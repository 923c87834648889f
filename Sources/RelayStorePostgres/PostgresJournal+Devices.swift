import Logging
import PostgresNIO
import RelayCore

extension PostgresJournal: DeviceJournal {
    public func device(id: String, completion: @escaping (Result<DeviceRecord?, any Error>) -> Void) {
        perform(
            "read a device",
            { connection, logger in try await PostgresDeviceQueries.device(connection, id: id, logger: logger) },
            completion: completion
        )
    }

    public func device(tokenHash: String, protocolName: String, completion: @escaping (Result<DeviceRecord?, any Error>) -> Void) {
        perform(
            "read a device by its token",
            { connection, logger in
                try await PostgresDeviceQueries.device(connection, tokenHash: tokenHash, protocolName: protocolName, logger: logger)
            },
            completion: completion
        )
    }

    public func devices(protocolName: String?, completion: @escaping (Result<[DeviceRecord], any Error>) -> Void) {
        perform(
            "read devices",
            { connection, logger in
                if let protocolName { return try await PostgresDeviceQueries.all(connection, protocolName: protocolName, logger: logger) }
                return try await PostgresDeviceQueries.all(connection, logger: logger)
            },
            completion: completion
        )
    }

    /// Reads the snapshot (holding the device's row, and the pairing link's when asked, until
    /// commit, so other nodes' changes to them wait), runs `change`, and stores what it changed,
    /// in one transaction. "Now" for the pairing link is the system clock's, as the SQLite
    /// store's default.
    ///
    /// A `change` that throws stores nothing, and its error reaches `completion` as it is.
    public func updateDevice<R: Sendable>(
        _ request: DeviceSnapshot.Request,
        _ change: @escaping @Sendable (inout DeviceSnapshot) throws -> R,
        completion: @escaping (Result<R, any Error>) -> Void
    ) {
        let now = SystemClock().nowMillis()
        performTransaction(
            "change a device",
            { connection, logger in
                let before = try await Self.snapshot(connection, request, now: now, logger: logger)
                var after = before
                let result = try change(&after)
                try await Self.store(after.changes(from: before), connection, request: request, now: now, logger: logger)
                return result
            },
            completion: completion
        )
    }

    public func recordSeen(_ seen: [String: Int64]) {
        guard !seen.isEmpty else { return }
        background("record when devices were last seen") { connection, logger in
            try await PostgresDeviceQueries.touch(connection, seen, logger: logger)
        }
    }

    public func savePendingPairing(_ pairing: PendingPairing) {
        let holder = pendingHolder.withLock { $0 }
        background("mirror a pending pairing request") { connection, logger in
            try await PostgresOperatorQueries.upsertPending(connection, pairing, holder: holder, logger: logger)
        }
    }

    public func removePendingPairing(deviceID: String, protocolName: String) {
        let holder = pendingHolder.withLock { $0 }
        background("remove a pending pairing request") { connection, logger in
            try await PostgresOperatorQueries.removePending(
                connection,
                deviceID: deviceID,
                protocolName: protocolName,
                holder: holder,
                logger: logger
            )
        }
    }

    static func snapshot(
        _ connection: PostgresConnection,
        _ request: DeviceSnapshot.Request,
        now: Int64,
        logger: Logger
    ) async throws -> DeviceSnapshot {
        let id = request.deviceID
        let device = try await PostgresDeviceQueries.device(connection, id: id, lock: true, logger: logger)
        var tokens: [String: DeviceToken] = [:]
        for token in try await PostgresDeviceTokenQueries.all(connection, deviceID: id, logger: logger) { tokens[token.role] = token }
        let bots = try await PostgresPairingLinkQueries.bots(connection, deviceID: id, logger: logger)
        let adminExists = request.adminExists ? try await PostgresDeviceQueries.hasAdmin(connection, logger: logger) : false
        var userDeviceCount = 0
        if let user = request.countDevicesOf {
            userDeviceCount = try await PostgresDeviceQueries.count(connection, userID: user.userID, protocolName: user.protocolName, logger: logger)
        }
        var pairLinkUsable = false
        if let hash = request.pairLinkHash {
            pairLinkUsable = try await PostgresPairingLinkQueries.isUsable(connection, tokenHash: hash, now: now, lock: true, logger: logger)
        }
        return DeviceSnapshot(
            deviceID: id,
            device: device,
            tokens: tokens,
            bots: bots,
            adminExists: adminExists,
            userDeviceCount: userDeviceCount,
            pairLinkUsable: pairLinkUsable
        )
    }

    static func store(
        _ changes: DeviceChangeSet,
        _ connection: PostgresConnection,
        request: DeviceSnapshot.Request,
        now: Int64,
        logger: Logger
    ) async throws {
        guard !changes.isEmpty else { return }
        let id = changes.deviceID
        if let device = changes.device { try await PostgresDeviceQueries.store(connection, device, logger: logger) }
        for token in changes.tokens { try await PostgresDeviceTokenQueries.store(connection, token, logger: logger) }
        for role in changes.removedRoles { try await PostgresDeviceTokenQueries.delete(connection, deviceID: id, role: role, logger: logger) }
        for (bot, hash) in changes.bots {
            try await PostgresPairingLinkQueries.setBotToken(connection, deviceID: id, botID: bot, tokenHash: hash, now: now, logger: logger)
        }
        if !changes.removedBots.isEmpty {
            _ = try await PostgresPairingLinkQueries.removeBots(connection, deviceID: id, botIDs: changes.removedBots, logger: logger)
        }
        if changes.consumesPairLink, let hash = request.pairLinkHash {
            _ = try await PostgresPairingLinkQueries.consumeLink(connection, tokenHash: hash, now: now, logger: logger)
        }
    }
}

extension PostgresJournal: AccountJournal {
    public func recordAccount(_ status: AccountStatus) {
        background("record an upstream account's state") { connection, logger in
            try await PostgresAccountQueries.record(connection, status, logger: logger)
        }
    }

    public func forgetAccount(_ name: String) {
        background("forget a removed upstream account") { connection, logger in
            try await PostgresAccountQueries.delete(connection, name: name, logger: logger)
        }
    }
}
