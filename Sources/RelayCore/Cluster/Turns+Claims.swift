extension Turns {
    /// Starts the conversation's next queued turn when none is active. In a cluster the ledger
    /// decides first: one turn per conversation runs on all nodes together, in acceptance order.
    func runNext(_ conversationID: String) {
        guard let lane = lanes[conversationID], lane.active == nil, !lane.claiming else { return }
        guard let next = lane.queue.first else { return dropIfIdle(conversationID) }
        guard let cluster else { return startFirst(of: lane, conversationID) }
        claim(next, in: lane, conversationID, cluster)
    }

    /// In a cluster: asks for the conversation's next turn right behind the write that ends the
    /// active one (its answer or failure). The writer sends them in order, in one call when they
    /// meet in its queue, so the claim sees the end: one writer cycle per turn instead of two.
    func claimAhead(_ conversationID: String) {
        guard let cluster, let lane = lanes[conversationID], !lane.claiming, let next = lane.queue.first else { return }
        claim(next, in: lane, conversationID, cluster)
    }

    private func claim(_ next: Turn, in lane: Lane, _ conversationID: String, _ cluster: ClusterLink) {
        // One turn per conversation runs in the whole cluster: the ledger says when this one may.
        lane.claiming = true
        lane.waitsForClaim = false
        cluster.ledger.claim(runID: next.ref.runID, conversationID: conversationID, node: cluster.node) { [self] result in
            lane.claiming = false
            guard lanes[conversationID] === lane, lane.active == nil, lane.queue.first === next else {
                // Dropped, aborted or passed by an older turn while it was being claimed (or the
                // turn before it still holds the lane): a claim it got is given back (a turn
                // still queued asks again in its order).
                if case .success(.running) = result { cluster.ledger.withdraw(runID: next.ref.runID) }
                return runNext(conversationID)
            }
            switch result {
            case .success(.running):
                startFirst(of: lane, conversationID)
            case .success(.ended):
                // Failed elsewhere (its node was declared dead): the failure is out already.
                lane.queue.removeFirst()
                runNext(conversationID)
            case .success(.waiting):
                lane.waitsForClaim = true
            case .failure(let error):
                lane.waitsForClaim = true
                logger.warning("could not claim a turn", metadata: ["run": "\(next.ref.runID)", "error": "\(error)"])
            }
        }
    }

    /// Asks again for the turns told to wait for another node's (the log moved: that one may have ended).
    func retryClaims() {
        for (conversationID, lane) in lanes where lane.waitsForClaim { runNext(conversationID) }
    }

    /// Another node stored a run's answer or failure: whoever waits for that run here hears it
    /// (`agent.wait` on a socket of this node for a turn another node ran).
    func endedElsewhere(_ event: BusEvent) {
        switch event {
        case .message(let answer) where answer.role == .assistant && !answer.isNote:
            if let runID = answer.turn?.runID { ended(runID, .answered(answer)) }
        case .turnFailed(let failure):
            ended(failure.turn.runID, .failed(failure))
        default:
            break
        }
    }

    /// Queues a dead node's waiting turn, or one handed to this node, here (once), in acceptance
    /// order among this conversation's queued turns (the ledger runs them in that order), on the
    /// backend it was handed over for, else the conversation's own.
    func adopt(_ adopted: AdoptedTurn) {
        let ref = TurnRef(runID: adopted.runID, deviceID: adopted.message.deviceID, clientID: adopted.message.clientID)
        let lane = lane(adopted.message.conversationID)
        guard lane.active?.ref.runID != ref.runID, !lane.queue.contains(where: { $0.ref.runID == ref.runID }) else { return }
        let turn = Turn(adopted.message, ref: ref, policy: TurnPolicy(backend: adopted.backend), answer: adopted.answer)
        lane.insertInOrder(turn)
        runNext(adopted.message.conversationID)
    }
}
