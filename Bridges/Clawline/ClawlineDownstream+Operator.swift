import RelayCore
import RelayStore

extension ClawlineDownstream {
    static let operatorPollMillis = 250

    func scheduleOperatorPoll() {
        loop.schedule(afterMillis: Self.operatorPollMillis) { [weak self] in
            self?.pollOperatorCommands()
        }
    }

    /// Picks up what `clawrelay devices` asked of the running relay.
    private func pollOperatorCommands() {
        let after = lastOperatorCommand
        store.perform({ db in try OperatorQueries.pending(db, after: after) }) { [self] result in
            defer { scheduleOperatorPoll() }
            guard case .success(let commands) = result else { return }
            let now = clock.nowMillis()
            pairLimiter.prune(now: now)
            authLimiter.prune(now: now)
            for command in commands {
                lastOperatorCommand = max(lastOperatorCommand, command.id)
                run(command)
            }
        }
    }

    private func run(_ command: OperatorCommand) {
        let finish: (String) -> Void = { [store, clock] outcome in
            store.perform({ db in try OperatorQueries.complete(db, id: command.id, result: outcome, at: clock.nowMillis()) }) { _ in }
        }
        switch command.action {
        case .approve:
            decide(deviceID: command.deviceID, approve: true, userID: command.userID, completion: finish)
        case .deny:
            if pairing.entry(command.deviceID) != nil {
                decide(deviceID: command.deviceID, approve: false, userID: nil, completion: finish)
            } else {
                cutOff(deviceID: command.deviceID)
                finish("denylisted")
            }
        case .revoke:
            cutOff(deviceID: command.deviceID)
            finish("revoked")
        }
    }
}
