import RelayCore

/// The cluster's shared pending pushes in memory, with PostgreSQL's rules: a claim by a node
/// declared dead, or one held past its time, is free again.
extension MemoryJournal: PushClaims {
    public func claimPushes(
        deviceID: String,
        conversationID: String,
        node: NodeIncarnation,
        now: Int64,
        until: Int64,
        completion: @escaping (Result<[PendingPush], any Error>) -> Void
    ) {
        guard !deadNodes.contains(node) else { return later(.success([]), completion) }
        let burst = pendingPushes.values.filter { $0.deviceID == deviceID && $0.conversationID == conversationID && isFree($0.id, now: now) }
        for push in burst { pushClaims[push.id] = (node, until) }
        later(.success(burst.sorted { $0.id < $1.id }), completion)
    }

    public func deleteClaimed(ids: [String], node: NodeIncarnation) {
        for id in ids where pushClaims[id]?.node == node { deletePush(id: id) }
    }

    public func strandedPushes(dueBefore: Int64, now: Int64, limit: Int, completion: @escaping (Result<[PendingPush], any Error>) -> Void) {
        var seen: Set<String> = []
        let stranded = pendingPushes.values.sorted { ($0.dueAt, $0.id) < ($1.dueAt, $1.id) }.filter { push in
            push.dueAt <= dueBefore && isFree(push.id, now: now) && seen.insert("\(push.deviceID)|\(push.conversationID)").inserted
        }
        later(.success(Array(stranded.prefix(limit))), completion)
    }

    /// No live node holds the push.
    private func isFree(_ id: String, now: Int64) -> Bool {
        guard let claim = pushClaims[id] else { return true }
        return claim.until < now || deadNodes.contains(claim.node)
    }
}
