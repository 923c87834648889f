import RelayCore

extension ClawlineDownstream: OperatorActions {
    public func resolvePending(deviceID: String, approve: Bool, userID: String?, completion: @escaping (String) -> Void) -> Bool {
        guard pairing.entry(deviceID) != nil else { return false }
        decide(deviceID: deviceID, approve: approve, userID: userID, completion: completion)
        return true
    }

    /// Forgets rate-limit history older than its window, so memory follows active devices only.
    func scheduleLimiterPruning() {
        loop.schedule(afterMillis: 60_000) { [weak self] in
            guard let self else { return }
            let now = clock.nowMillis()
            pairLimiter.prune(now: now)
            authLimiter.prune(now: now)
            messageLimiter.prune(now: now)
            typingLimiter.prune(now: now)
            oversizeLimiter.prune(now: now)
            scheduleLimiterPruning()
        }
    }
}
