/// How the nodes of a cluster share the pushes waiting to go, so one burst of answers for a device
/// and conversation makes one push whichever nodes stored them, and a push stored by a node that
/// dies still goes.
///
/// Every node stores the pushes its answers make (`PushJournal.savePush`, which also drops any
/// claim on the row: a push that grew after a claim is not the claimed push any more). The first
/// node whose timer fires for a device and conversation claims every stored push of that pair no
/// live node holds, for a while (the visibility timeout), sends them as one, and deletes what it
/// claimed. Another node's timer then finds nothing left to claim. A claim by a node that died,
/// or one held past its time, is free again; `strandedPushes` finds what waits that way.
///
/// The PostgreSQL journal implements it, and `MemoryJournal` for in-memory clusters; a relay on
/// its own never claims.
///
/// - Important: called on the loop; completions run on the loop.
public protocol PushClaims: AnyObject {
    /// Claims for `node` until `until` the stored pushes of `deviceID` in `conversationID` that no
    /// live node holds, and returns them (empty when another node sent or holds them). A node
    /// that is no longer live claims nothing.
    func claimPushes(
        deviceID: String,
        conversationID: String,
        node: NodeIncarnation,
        now: Int64,
        until: Int64,
        completion: @escaping (Result<[PendingPush], any Error>) -> Void
    )
    /// Deletes the pushes `ids` that `node` still holds (one stored again since its claim stays).
    func deleteClaimed(ids: [String], node: NodeIncarnation)
    /// Pushes due at `dueBefore` or earlier that no live node holds, at most `limit`, one per
    /// device and conversation: their storing node died or stopped sending, or a claim lapsed.
    func strandedPushes(dueBefore: Int64, now: Int64, limit: Int, completion: @escaping (Result<[PendingPush], any Error>) -> Void)
}

extension PendingPush {
    /// One push standing for `pushes` (one burst of a device and conversation, from any nodes):
    /// their counts add up, the newest event gives the text, and the push keeps `preferredID`'s
    /// id when it is among them (the id is the APNs `apns-id`).
    static func merged(_ pushes: [PendingPush], preferredID: String) -> PendingPush? {
        guard var merged = pushes.max(by: { ($0.lastSeq, $0.createdAt, $0.id) < ($1.lastSeq, $1.createdAt, $1.id) }) else { return nil }
        merged.id = pushes.contains { $0.id == preferredID } ? preferredID : pushes.map(\.id).min() ?? merged.id
        merged.count = pushes.reduce(0) { $0 + $1.count }
        merged.createdAt = pushes.map(\.createdAt).min() ?? merged.createdAt
        merged.dueAt = pushes.map(\.dueAt).min() ?? merged.dueAt
        return merged
    }
}
