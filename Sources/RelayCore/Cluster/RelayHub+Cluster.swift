extension RelayHub {
    /// Another node of the cluster is dead (its lock went, or its lease lapsed): its running turns
    /// fail as a restart fails them and every device hears it; its waiting turns become this
    /// node's and run here in their order, as do the turns that waited behind them. `completion`
    /// gets how many turns failed and how many were taken over. Nothing on a single node.
    public func declareDead(_ node: NodeIncarnation, completion: @escaping (Result<(failed: Int, adopted: Int), any Error>) -> Void = { _ in }) {
        guard let cluster = turns.cluster else { return completion(.success((0, 0))) }
        logger.warning("relay node declared dead", metadata: ["node": "\(node)"])
        cluster.ledger.declareDead(node, survivor: cluster.node, reason: "the relay node \(node.node) stopped", now: clock.nowMillis()) {
            [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let dead):
                turns.handover.forget(node)
                for (failure, seq) in dead.failed {
                    queue.publish(.turnFailed(failure), userID: failure.userID, queuedFor: [], seqs: seq...seq)
                    turns.ended(failure.turn.runID, .failed(failure))
                }
                for adopted in dead.adopted { turns.adopt(adopted) }
                turns.retryClaims()
                logger.info(
                    "took over a dead node's turns",
                    metadata: ["node": "\(node)", "failed": "\(dead.failed.count)", "adopted": "\(dead.adopted.count)"]
                )
                completion(.success((dead.failed.count, dead.adopted.count)))
            case .failure(let error):
                logger.error("could not take over a dead node's turns", metadata: ["node": "\(node)", "error": "\(error)"])
                completion(.failure(error))
            }
        }
    }

    /// Who holds each of the cluster's upstream accounts now (the store's answer at each
    /// heartbeat; at start every account with no holder yet). An account's turns run on its
    /// holder: this node hands them there, or waits while nobody holds it; a node that holds one
    /// takes the turns handed to it. Nothing on a single node.
    public func accountLeases(_ leases: [AccountLease]) {
        // An account another node holds shows its holder's link state here too (`backends.list`, `/metrics`).
        for lease in leases where lease.holder != nil && lease.holder != turns.cluster?.node {
            if let state = lease.state { accounts.mirror(lease.account, state) }
        }
        turns.updateLeases(leases)
    }

    /// What another node asked or told.
    func apply(_ control: ClusterControl) {
        switch control {
        case .abort(let conversationID, let runID, let reason):
            turns.abortHere(conversationID: conversationID, runID: runID, reason: reason)
        case .readMoved(let cursor):
            pushes.read(userID: cursor.userID, conversationID: cursor.conversationID, seq: cursor.seq)
            delivery?.applyingRemote { changes.publish(.read(cursor)) }
        case .conversationDeleted(let conversation):
            conversations.forget(id: conversation.id)
            delivery?.applyingRemote { changes.publish(.deleted(conversation)) }
        case .turnsHandedOver(let node):
            if node == turns.cluster?.node.node { turns.takeHandedTurns() }
        case .pushTargetsChanged(let deviceID):
            pushes.reload(deviceID: deviceID)
        }
    }
}
