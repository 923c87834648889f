import RelayCore

extension PostgresJournal: PushJournal {
    public func pushDevices(completion: @escaping (Result<[PushDevice], any Error>) -> Void) {
        perform(
            "read push devices",
            { connection, logger in try await PostgresPushQueries.devices(connection, logger: logger) },
            completion: completion
        )
    }

    public func pushDevice(_ deviceID: String, completion: @escaping (Result<PushDevice?, any Error>) -> Void) {
        perform(
            "read a push device",
            { connection, logger in try await PostgresPushQueries.devices(connection, deviceID: deviceID, logger: logger).first },
            completion: completion
        )
    }

    public func savePushTarget(
        deviceID: String,
        kind: PushTarget.Kind,
        token: String,
        platform: String?,
        at millis: Int64,
        completion: @escaping (Result<Void, any Error>) -> Void
    ) {
        perform(
            "store a push target",
            { connection, logger in
                try await PostgresPushQueries.upsert(
                    connection,
                    deviceID: deviceID,
                    kind: kind.rawValue,
                    token: token,
                    platform: platform,
                    at: millis,
                    logger: logger
                )
            },
            completion: completion
        )
    }

    public func pendingPushes(completion: @escaping (Result<[PendingPush], any Error>) -> Void) {
        perform(
            "read pending pushes",
            { connection, logger in try await PostgresPushQueries.pending(connection, logger: logger) },
            completion: completion
        )
    }

    public func savePush(_ push: PendingPush) {
        background("save a pending push") { connection, logger in try await PostgresPushQueries.savePending(connection, push, logger: logger) }
    }

    public func deletePush(id: String) {
        background("delete a pending push") { connection, logger in try await PostgresPushQueries.deletePending(connection, id: id, logger: logger) }
    }

    public func retire(_ target: PushTarget, reason: String, at millis: Int64) {
        background("retire a push target") { connection, logger in
            try await PostgresPushQueries.retire(connection, target, reason: reason, at: millis, logger: logger)
        }
    }

    public func record(_ attempts: [PushAttempt], userID: String?) {
        guard !attempts.isEmpty else { return }
        background("record push attempts") { connection, logger in
            try await PostgresPushQueries.record(connection, attempts, userID: userID, logger: logger)
        }
    }
}

extension PostgresJournal: PushClaims {
    public func claimPushes(
        deviceID: String,
        conversationID: String,
        node: NodeIncarnation,
        now: Int64,
        until: Int64,
        completion: @escaping (Result<[PendingPush], any Error>) -> Void
    ) {
        perform(
            "claim pending pushes",
            { connection, logger in
                try await PostgresPushQueries.claim(
                    connection,
                    deviceID: deviceID,
                    conversationID: conversationID,
                    node: node,
                    now: now,
                    until: until,
                    logger: logger
                )
            },
            completion: completion
        )
    }

    public func deleteClaimed(ids: [String], node: NodeIncarnation) {
        guard !ids.isEmpty else { return }
        background("delete sent pushes") { connection, logger in
            try await PostgresPushQueries.deleteClaimed(connection, ids: ids, node: node, logger: logger)
        }
    }

    public func strandedPushes(dueBefore: Int64, now: Int64, limit: Int, completion: @escaping (Result<[PendingPush], any Error>) -> Void) {
        perform(
            "read pushes no node holds",
            { connection, logger in try await PostgresPushQueries.stranded(connection, dueBefore: dueBefore, now: now, limit: limit, logger: logger)
            },
            completion: completion
        )
    }
}
