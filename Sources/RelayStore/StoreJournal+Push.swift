import RelayCore

extension StoreJournal: PushJournal {
    public func pushDevices(completion: @escaping (Result<[PushDevice], any Error>) -> Void) {
        store.perform({ db in try PushTargetQueries.devices(db) }, completion: completion)
    }

    public func pushDevice(_ deviceID: String, completion: @escaping (Result<PushDevice?, any Error>) -> Void) {
        store.perform({ db in try PushTargetQueries.devices(db, deviceID: deviceID).first }, completion: completion)
    }

    public func savePushTarget(
        deviceID: String,
        kind: PushTarget.Kind,
        token: String,
        platform: String?,
        at millis: Int64,
        completion: @escaping (Result<Void, any Error>) -> Void
    ) {
        store.perform(
            { db in try PushTargetQueries.upsert(db, deviceID: deviceID, kind: kind.rawValue, token: token, platform: platform, at: millis) },
            completion: completion
        )
    }

    public func pendingPushes(completion: @escaping (Result<[PendingPush], any Error>) -> Void) {
        store.perform({ db in try PushTargetQueries.pending(db) }, completion: completion)
    }

    public func savePush(_ push: PendingPush) {
        background("save a pending push") { db in try PushTargetQueries.savePending(db, push) }
    }

    public func deletePush(id: String) {
        background("delete a pending push") { db in try PushTargetQueries.deletePending(db, id: id) }
    }

    public func retire(_ target: PushTarget, reason: String, at millis: Int64) {
        background("retire a push target") { db in try PushTargetQueries.retire(db, target, reason: reason, at: millis) }
    }

    public func record(_ attempts: [PushAttempt], userID: String?) {
        guard !attempts.isEmpty else { return }
        background("record push attempts") { db in try PushTargetQueries.record(db, attempts, userID: userID) }
    }
}
