import Logging

extension Turns {
    /// Who holds the cluster's upstream accounts changed (`RelayHub.accountLeases`): turns that
    /// waited for a holder ask again, and a node that holds one looks for turns handed to it.
    func updateLeases(_ leases: [AccountLease]) {
        guard let cluster else { return }
        if handover.update(leases) { retryClaims() }
        if handover.holdsAny(cluster.node) { takeHandedTurns() }
    }

    /// In a cluster an upstream account's turns run on the node that holds it: true when the
    /// active `turn` goes there (or waits for a holder) instead of running here on `backendName`.
    func handsOver(_ turn: Turn, backend backendName: String) -> Bool {
        guard let cluster else { return false }
        switch handover.route(backendName, me: cluster.node) {
        case .here:
            return false
        case .nobody:
            logger.notice(
                "no relay node holds the upstream account; the turn waits for one",
                metadata: ["account": "\(backendName)", "run": "\(turn.ref.runID)"]
            )
            waitForHolder(turn)
        case .linking:
            logger.info("this node took the upstream account just now; the turn waits for its link", metadata: ["account": "\(backendName)"])
            waitForHolder(turn)
        case .node(let holder):
            handOver(turn, to: holder, backend: backendName, cluster: cluster)
        }
        return true
    }

    /// Reads the turns other nodes handed to this one and queues those it does not have yet, in
    /// acceptance order; one read at a time (a hint during a read reads again after it).
    func takeHandedTurns() {
        guard let cluster else { return }
        handedReads.run { [self] finished in
            cluster.ledger.handedTurns(to: cluster.node) { [self] result in
                switch result {
                case .success(let handed):
                    for turn in handed { adopt(turn) }
                case .failure(let error):
                    logger.warning("could not read the turns handed to this node", metadata: ["error": "\(error)"])
                }
                _ = finished()
            }
        }
    }

    /// The account's holder runs `turn`: it keeps its place in the conversation's order and waits
    /// there; whoever waits for it here hears its answer from the log.
    private func handOver(_ turn: Turn, to holder: NodeIncarnation, backend: String, cluster: ClusterLink) {
        let conversationID = turn.conversationID
        cluster.ledger.handOver(runID: turn.ref.runID, from: cluster.node, to: holder, backend: backend) { [self] result in
            guard let lane = lanes[conversationID], lane.active === turn else { return }
            lane.active = nil
            bus.publish(.assistantTyping(conversationID: conversationID, active: false), to: turn.userID)
            switch result {
            case .success(.handed):
                logger.debug("handed a turn to the node holding its account", metadata: ["run": "\(turn.ref.runID)", "node": "\(holder)"])
                cluster.fabric.send(.turnsHandedOver(node: holder.node))
            case .success(.notOwned):
                // No longer this node's (it was declared dead, or the turn ended): nothing to run.
                break
            case .success(.holderGone):
                // The holder died: the account is nobody's until the next answer names a new one.
                handover.forget(holder)
                return waitForHolder(turn)
            case .failure(let error):
                logger.warning("could not hand a turn to the node holding its account", metadata: ["run": "\(turn.ref.runID)", "error": "\(error)"])
                lane.queue.insert(turn, at: 0)
                lane.waitsForClaim = true
                return
            }
            runNext(conversationID)
        }
    }

    /// The account's link here reported (`Accounts.report`): turns that waited for its first
    /// report ask again.
    func accountReported(_ account: String, _ state: LinkState) {
        if handover.linkReported(account, state) { retryClaims() }
    }

    /// No node can run the account's turns now (its holder died and no survivor took it yet, or
    /// this node's link has not reported since it took it): the turn is given back and waits,
    /// first in its lane, until the holders or the link's state change.
    private func waitForHolder(_ turn: Turn) {
        guard let cluster, let lane = lanes[turn.conversationID] else { return }
        if lane.active === turn {
            lane.active = nil
            bus.publish(.assistantTyping(conversationID: turn.conversationID, active: false), to: turn.userID)
        }
        cluster.ledger.withdraw(runID: turn.ref.runID)
        lane.queue.insert(turn, at: 0)
        lane.waitsForClaim = true
    }
}
