extension Turns {
    /// Turns running now on `backend` (this object, not whatever its name routes to).
    public func runningCount(on backend: any Backend) -> Int {
        lanes.values.count { $0.active?.backend === backend }
    }

    /// Calls `done` once no turn runs on `backend`: at once when none does, else when its last
    /// running turn ends. A reload retires a replaced backend this way, so a turn that started
    /// on it finishes there.
    public func whenIdle(_ backend: any Backend, _ done: @escaping () -> Void) {
        guard runningCount(on: backend) > 0 else { return done() }
        idleWaiters.append((backend, done))
    }

    /// `turn` is no longer active: wakes who waited for its backend to go idle.
    func released(_ turn: Turn) {
        guard let backend = turn.backend, idleWaiters.contains(where: { $0.backend === backend }), runningCount(on: backend) == 0 else { return }
        let ready = idleWaiters.filter { $0.backend === backend }
        idleWaiters.removeAll { $0.backend === backend }
        for waiter in ready { waiter.done() }
    }
}
