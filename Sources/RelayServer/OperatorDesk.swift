import RelayCore
import RelayStore
import RelayTransport

/// Picks up what `clawrelay devices` asked of the running relay (rows in `operator_commands`)
/// and hands each command to the core, whose observers (the bridges) follow. The store says
/// which commands are this node's (on PostgreSQL: those for its incarnation or for every node)
/// and may wake the desk when one is queued; the desk also polls, every `pollMillis` of the store.
final class OperatorDesk {
    private let storage: any RelayStorage
    private let loop: ServiceLoop
    private let clock: any Clock
    private let hub: RelayHub
    /// The newest command before start: those are not run.
    private let startCommand: Int64
    /// Commands run and not yet answered in the store (so a poll meanwhile does not run them again).
    private var running: Set<Int64> = []
    /// The polls of the store: one at a time (a wake-up during one polls again once it ends).
    private let polls = CoalescedRun()
    private var timer: TimerID?

    init(storage: any RelayStorage, loop: ServiceLoop, clock: any Clock, hub: RelayHub) throws {
        self.hub = hub
        self.storage = storage
        self.loop = loop
        self.clock = clock
        startCommand = try storage.lastOperatorCommand()
    }

    /// Loop thread.
    func start() {
        let desk = LoopBound(self, loop: loop)
        storage.watchOperatorCommands { desk.loop.execute { desk.value.poll() } }
        schedulePoll()
    }

    private func schedulePoll() {
        if let timer { loop.cancel(timer) }
        timer = loop.schedule(afterMillis: storage.operatorPollMillis) { [weak self] in
            self?.timer = nil
            self?.poll()
        }
    }

    private func poll() {
        polls.run { [self] finished in
            storage.operatorCommands(
                after: startCommand,
                completion: { [self] result in
                    if case .success(let commands) = result {
                        running.formIntersection(commands.map(\.id))
                        for command in commands where running.insert(command.id).inserted { run(command) }
                    }
                    if !finished() { schedulePoll() }
                }
            )
        }
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
