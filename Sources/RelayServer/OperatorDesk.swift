import RelayCore
import RelayStore
import RelayTransport

/// Picks up what `clawrelay devices` asked of the running relay (rows in `operator_commands`)
/// and hands each command to the core, whose observers (the bridges) follow.
final class OperatorDesk {
    static let pollMillis = 250

    private let storage: any RelayStorage
    private let loop: ServiceLoop
    private let clock: any Clock
    private let hub: RelayHub
    private var lastCommand: Int64

    init(storage: any RelayStorage, loop: ServiceLoop, clock: any Clock, hub: RelayHub) throws {
        self.hub = hub
        self.storage = storage
        self.loop = loop
        self.clock = clock
        lastCommand = try storage.lastOperatorCommand()
    }

    /// Loop thread.
    func start() { schedulePoll() }

    private func schedulePoll() {
        loop.schedule(afterMillis: Self.pollMillis) { [weak self] in self?.poll() }
    }

    private func poll() {
        let after = lastCommand
        storage.operatorCommands(
            after: after,
            completion: { [self] result in
                defer { schedulePoll() }
                guard case .success(let commands) = result else { return }
                for command in commands {
                    lastCommand = max(lastCommand, command.id)
                    run(command)
                }
            }
        )
    }

    private func run(_ command: OperatorCommand) {
        let finish: (String) -> Void = { [storage, clock] outcome in
            storage.completeOperatorCommand(id: command.id, result: outcome, at: clock.nowMillis())
        }
        switch command.action {
        case .approve, .deny:
            let approve = command.action == .approve
            if hub.devices.pairing.decide(command.deviceID, approve: approve, userID: command.userID, completion: finish) { return }
            if approve {
                finish("no pending request for \(command.deviceID)")
            } else {
                cutOff(command.deviceID)
                finish("denylisted")
            }
        case .revoke:
            hub.devices.revoke(command.deviceID) { [hub] outcome in
                hub.pushes.reload(deviceID: command.deviceID)
                finish(outcome)
            }
        case .refresh:
            hub.devices.refresh(command.deviceID)
            hub.pushes.reload(deviceID: command.deviceID)
            finish("refreshed")
        case .bindConversation:
            bind(conversationID: command.deviceID, to: command.userID ?? "", finish: finish)
        }
    }

    private func cutOff(_ deviceID: String) { hub.devices.cutOff(deviceID) }

    /// `clawrelay conversations bind`: checked against the running relay's backends.
    private func bind(conversationID: String, to backend: String, finish: @escaping (String) -> Void) {
        guard hub.router.backends[backend] != nil else {
            return finish("no backend named \(backend); configured: \(hub.router.backends.keys.sorted().joined(separator: ", "))")
        }
        hub.conversations.edit(id: conversationID, .rebind(backend: backend)) { result in
            switch result {
            case .success(.some):
                finish("bound")
            case .success(nil): finish("no conversation \(conversationID) (clawrelay conversations list shows them)")
            case .failure(let error): finish("the store failed: \(error)")
            }
        }
    }
}
