/// What pushes need of a cluster: who this node is, where the other nodes say a device is, the
/// pending pushes every node stores, and the fabric that tells the others a device's targets
/// changed.
struct PushCluster {
    var node: NodeIncarnation
    var presence: any NodePresenceJournal
    var claims: any PushClaims
    var fabric: any ClusterFabric

    /// How long a claimed burst is this node's to send before another node may send it (the
    /// sinks' retries fit well inside).
    static let claimHoldMillis: Int64 = 120_000
    /// How often a node looks for pushes no live node holds.
    static let sweepMillis = 5_000
    /// How long past due a push waits for the node that stored it before a sweep takes it.
    static let strandedAfterMillis: Int64 = 10_000
    /// Most stranded pushes one sweep takes.
    static let sweepLimit = 200
    /// Every this many sweeps, every device's targets are read again (a target registered
    /// through another node whose hint was lost is known here from then on).
    static let targetReloadSweeps = 12
}

extension Pushes {
    /// A push of this node fell due: it claims the whole burst (its own push and those other
    /// nodes stored for the device and conversation that no live node holds) and sends it as
    /// one, unless the device is in the foreground on another node (it sees the answers there,
    /// as a device in the foreground here does): the claimed pushes are dropped then. Nothing
    /// left to claim: another node sent the burst.
    func sendBurst(_ push: PendingPush, to device: PushDevice, cluster: PushCluster) {
        let now = clock.nowMillis()
        cluster.claims.claimPushes(
            deviceID: push.deviceID,
            conversationID: push.conversationID,
            node: cluster.node,
            now: now,
            until: now + PushCluster.claimHoldMillis
        ) { [self] result in
            switch result {
            case .success(let claimed):
                guard let burst = PendingPush.merged(claimed, preferredID: push.id) else {
                    return logger.debug(
                        "push sent by another node",
                        metadata: ["device": "\(push.deviceID)", "conversation": "\(push.conversationID)"]
                    )
                }
                let ids = claimed.map(\.id)
                unlessPresentElsewhere(burst, claimed: ids, cluster: cluster) { [self] in
                    guard let dispatcher else { return cluster.claims.deleteClaimed(ids: ids, node: cluster.node) }
                    sendAnswer(burst, to: device, via: dispatcher, claimed: ids)
                }
            case .failure(let error):
                // Still stored: a sweep takes it once it is stranded.
                logger.warning("a push could not be claimed", metadata: ["device": "\(push.deviceID)", "error": "\(error)"])
            }
        }
    }

    /// Runs `send` unless the device is in the foreground on another node; when the read fails,
    /// `send` runs (better a push too many than none).
    private func unlessPresentElsewhere(_ push: PendingPush, claimed: [String], cluster: PushCluster, send: @escaping () -> Void) {
        cluster.presence.clusterPresence(deviceID: push.deviceID) { [self] result in
            guard case .success(.foreground) = result else { return send() }
            cluster.claims.deleteClaimed(ids: claimed, node: cluster.node)
            cancelledCount += 1
            logger.debug(
                "push cancelled",
                metadata: ["device": "\(push.deviceID)", "conversation": "\(push.conversationID)", "why": "in the foreground on another node"]
            )
        }
    }

    /// A sent answer push is deleted: in a cluster every stored push it stood for that this node
    /// still holds.
    func forgetSent(_ push: PendingPush, claimed: [String]) {
        guard let cluster else { return journal.deletePush(id: push.id) }
        cluster.claims.deleteClaimed(ids: claimed, node: cluster.node)
    }

    /// Takes the pushes no live node holds (their node died, or its claim lapsed) and sends them
    /// as they fall due here; then again after `PushCluster.sweepMillis`, while pushes are on.
    func sweep(round: Int = 1) {
        guard isEnabled, let cluster else { return }
        if round % PushCluster.targetReloadSweeps == 0 { reloadAll() }
        let now = clock.nowMillis()
        cluster.claims.strandedPushes(dueBefore: now - PushCluster.strandedAfterMillis, now: now, limit: PushCluster.sweepLimit) {
            [self] result in
            switch result {
            case .success(let stranded):
                if !stranded.isEmpty { logger.info("took over pushes no node holds", metadata: ["count": "\(stranded.count)"]) }
                for push in stranded where !hasPending(deviceID: push.deviceID, conversationID: push.conversationID) { arm(push) }
            case .failure(let error):
                logger.warning("could not look for pushes no node holds", metadata: ["error": "\(error)"])
            }
        }
        if let sweepTimer { loop.cancel(sweepTimer) }
        sweepTimer = loop.schedule(afterMillis: PushCluster.sweepMillis) { [weak self] in self?.sweep(round: round + 1) }
    }
}
