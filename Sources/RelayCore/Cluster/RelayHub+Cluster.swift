extension RelayHub {
    /// Another node of the cluster is dead (its lock went, or its lease lapsed): its running and
    /// waiting turns fail as a restart fails them, every device hears it, and turns that waited
    /// behind them start here. `completion` gets how many turns failed. Nothing on a single node.
    public func declareDead(_ node: NodeIncarnation, completion: @escaping (Result<Int, any Error>) -> Void = { _ in }) {
        guard let cluster = turns.cluster else { return completion(.success(0)) }
        logger.warning("relay node declared dead", metadata: ["node": "\(node)"])
        cluster.ledger.declareDead(node, reason: "the relay node \(node.node) stopped", now: clock.nowMillis()) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let failed):
                for (failure, seq) in failed {
                    queue.publish(.turnFailed(failure), userID: failure.userID, queuedFor: [], seqs: seq...seq)
                    turns.ended(failure.turn.runID, .failed(failure))
                }
                turns.retryClaims()
                completion(.success(failed.count))
            case .failure(let error):
                logger.error("could not fail a dead node's turns", metadata: ["node": "\(node)", "error": "\(error)"])
                completion(.failure(error))
            }
        }
    }
}
