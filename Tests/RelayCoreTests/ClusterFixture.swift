import Logging
import RelayCore
import RelayTesting

/// Several hubs on one loop over one memory journal, joined by a `MemoryCluster`: nodes of one
/// cluster in memory. Each node has its own scripted backend; one user, one conversation.
final class ClusterFixture {
    final class Node {
        let hub: RelayHub
        let backend: ScriptedBackend
        let fabric: MemoryFabric
        let identity: NodeIncarnation

        init(hub: RelayHub, backend: ScriptedBackend, fabric: MemoryFabric, identity: NodeIncarnation) {
            self.hub = hub
            self.backend = backend
            self.fabric = fabric
            self.identity = identity
        }
    }

    let loop = ManualLoop()
    let journal: MemoryJournal
    let cluster: MemoryCluster
    private(set) var nodes: [Node] = []
    let user = "user-1"
    private(set) var conversation: Conversation!
    private var sockets: UInt64 = 0

    init(nodes count: Int) {
        journal = MemoryJournal(loop: loop, clock: loop.clock)
        cluster = MemoryCluster(loop: loop)
        for _ in 0..<count { addNode() }
        var resolved: Conversation?
        nodes[0].hub.conversations.resolve(.main, userID: user, draft: ConversationDraft()) { resolved = try? $0.get() }
        loop.runUntilIdle()
        conversation = resolved
    }

    /// A new node joins (a restart is a new node: a new incarnation); returns its index.
    @discardableResult
    func addNode() -> Int {
        let index = nodes.count
        let backend = ScriptedBackend(name: "scripted")
        let fabric = cluster.join()
        let identity = NodeIncarnation(node: "node-\(index)")
        let hub = RelayHub(
            journal: journal,
            router: Router(backends: [backend], defaultBackend: nil),
            loop: loop,
            clock: loop.clock,
            logger: Logger(label: "node-\(index)"),
            cluster: ClusterLink(node: identity, fabric: fabric, journal: journal, ledger: journal)
        )
        hub.start()
        nodes.append(Node(hub: hub, backend: backend, fabric: fabric, identity: identity))
        return index
    }

    /// A foreground socket of the user on `node`.
    @discardableResult
    func connect(_ deviceID: String, on node: Int, delivery: MissedDelivery = .replay) -> RecordingEndpoint {
        sockets += 1
        let endpoint = RecordingEndpoint(deviceID: deviceID)
        nodes[node].hub.attach(endpoint, socket: sockets, userID: user, protocolName: "test", delivery: delivery)
        loop.runUntilIdle()
        return endpoint
    }

    /// Submits `text` from `device` through `node`; true when it was accepted.
    @discardableResult
    func send(_ text: String, from device: String, on node: Int) -> Bool {
        var outcome: SubmitOutcome?
        let message = UserMessage(conversationID: conversation.id, userID: user, deviceID: device, clientID: "c_\(text)", content: text)
        nodes[node].hub.turns.submit(message, policy: TurnPolicy()) { outcome = $0 }
        loop.runUntilIdle()
        if case .accepted = outcome { return true }
        return false
    }

    /// The backend of `node` emits `event` in its newest run.
    func emit(_ event: TurnEvent, on node: Int) {
        nodes[node].backend.runs.last?.emit(event)
        loop.runUntilIdle()
    }

    /// Lets the resync run once on every node.
    func resync() { loop.advance(millis: 1_000) }

    /// The node is gone (crashed): it hears nothing more; what it still writes is its own affair.
    func drop(_ node: Int) { cluster.remove(nodes[node].fabric) }

    /// What the backends of all nodes were asked, in start order per node.
    func runs(on node: Int) -> [String] { nodes[node].backend.runs.map(\.request.text) }
}

extension RecordingEndpoint {
    /// The messages' contents, in delivery order.
    var contents: [String] { messages.map(\.content) }
    /// The seqs of the messages and failures, in delivery order.
    var seqs: [Int64] { messages.map(\.seq) }
}
