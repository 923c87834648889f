import RelayCore

extension MemoryJournal: DeviceJournal, AssetJournal, AccountJournal {
    public func device(id: String, completion: @escaping (Result<DeviceRecord?, any Error>) -> Void) {
        later(.success(devices[id]), completion)
    }

    public func device(tokenHash: String, protocolName: String, completion: @escaping (Result<DeviceRecord?, any Error>) -> Void) {
        tokenReads += 1
        later(.success(devices.values.first { $0.tokenHash == tokenHash && $0.protocolName == protocolName }), completion)
    }

    public func devices(protocolName: String?, completion: @escaping (Result<[DeviceRecord], any Error>) -> Void) {
        let found = devices.values.filter { protocolName == nil || $0.protocolName == protocolName }.sorted {
            ($0.createdAt, $0.id) < ($1.createdAt, $1.id)
        }
        later(.success(found), completion)
    }

    public func updateDevice<R: Sendable>(
        _ request: DeviceSnapshot.Request,
        _ change: @escaping @Sendable (inout DeviceSnapshot) throws -> R,
        completion: @escaping (Result<R, any Error>) -> Void
    ) {
        write(completion) {
            let now = clock.nowMillis()
            let id = request.deviceID
            let before = DeviceSnapshot(
                deviceID: id,
                device: devices[id],
                tokens: deviceTokens[id] ?? [:],
                bots: botPairings[id] ?? [:],
                adminExists: request.adminExists && devices.values.contains { $0.isAdmin && $0.status == .approved },
                userDeviceCount: request.countDevicesOf.map { wanted in
                    devices.values.count { $0.userID == wanted.userID && $0.protocolName == wanted.protocolName && $0.status == .approved }
                } ?? 0,
                pairLinkUsable: request.pairLinkHash.flatMap { pairLinks[$0] }.map { !$0.used && $0.expiresAt > now } ?? false
            )
            var after = before
            let result = try change(&after)
            let changes = after.changes(from: before)
            if let device = changes.device { devices[id] = device }
            for token in changes.tokens { deviceTokens[id, default: [:]][token.role] = token }
            for role in changes.removedRoles { deviceTokens[id]?.removeValue(forKey: role) }
            for (bot, hash) in changes.bots { botPairings[id, default: [:]][bot] = hash }
            for bot in changes.removedBots { botPairings[id]?.removeValue(forKey: bot) }
            if changes.consumesPairLink, let hash = request.pairLinkHash { pairLinks[hash]?.used = true }
            return result
        }
    }

    public func recordSeen(_ seen: [String: Int64]) {
        for (id, millis) in seen { devices[id]?.lastSeenAt = millis }
    }

    public func savePendingPairing(_ pairing: PendingPairing) { pendingPairings["\(pairing.protocolName)|\(pairing.deviceID)"] = pairing }

    public func removePendingPairing(deviceID: String, protocolName: String) { pendingPairings.removeValue(forKey: "\(protocolName)|\(deviceID)") }

    public func saveAsset(_ asset: AssetRecord, completion: @escaping (Result<Void, any Error>) -> Void) {
        write(completion) { assets[asset.id] = asset }
    }

    public func asset(id: String, completion: @escaping (Result<AssetRecord?, any Error>) -> Void) { later(.success(assets[id]), completion) }

    public func recordAccount(_ status: AccountStatus) { accounts[status.name] = status }

    public func forgetAccount(_ name: String) { accounts.removeValue(forKey: name) }
}

extension MemoryJournal: PushJournal {
    public func savePushTarget(
        deviceID: String,
        kind: PushTarget.Kind,
        token: String,
        platform: String?,
        at millis: Int64,
        completion: @escaping (Result<Void, any Error>) -> Void
    ) {
        write(completion) {
            let target = PushTarget(deviceID: deviceID, kind: kind, token: token, registeredAt: millis)
            if let index = pushDevices.firstIndex(where: { $0.deviceID == deviceID }) {
                pushDevices[index].targets.removeAll { $0.kind == kind }
                pushDevices[index].targets.append(target)
            } else {
                let owner = devices[deviceID]
                pushDevices.append(
                    PushDevice(deviceID: deviceID, userID: owner?.userID ?? "", protocolName: owner?.protocolName ?? "", targets: [target])
                )
            }
        }
    }

    public func pushDevices(completion: @escaping (Result<[PushDevice], any Error>) -> Void) { later(.success(pushDevices), completion) }

    public func pushDevice(_ deviceID: String, completion: @escaping (Result<PushDevice?, any Error>) -> Void) {
        later(.success(pushDevices.first { $0.deviceID == deviceID }), completion)
    }

    public func pendingPushes(completion: @escaping (Result<[PendingPush], any Error>) -> Void) {
        later(.success(pendingPushes.values.sorted { $0.dueAt < $1.dueAt }), completion)
    }

    /// Stores the push; a claim on it goes (`PushClaims`).
    public func savePush(_ push: PendingPush) {
        pendingPushes[push.id] = push
        pushClaims.removeValue(forKey: push.id)
    }

    public func deletePush(id: String) {
        pendingPushes.removeValue(forKey: id)
        pushClaims.removeValue(forKey: id)
    }

    public func retire(_ target: PushTarget, reason: String, at millis: Int64) {
        retiredTargets.append((target, reason))
        pushDevices = pushDevices.map { device in
            var device = device
            device.targets.removeAll { $0 == target && $0.registeredAt <= millis }
            return device
        }.filter { !$0.targets.isEmpty }
    }

    public func record(_ attempts: [PushAttempt], userID: String?) { pushAttempts += attempts }
}
