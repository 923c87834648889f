import RelayCore

/// Nodes of a cluster in memory, on one loop: what one node announces reaches the others as a
/// job on the loop, unless the test loses it, repeats it or holds it back.
///
/// - Important: one test's thread (the loop's).
public final class MemoryCluster {
    private let loop: any LoopExecutor
    private var nodes: [MemoryFabric] = []
    /// Positions announced from now on are dropped (a listener that missed them).
    public var losePositions = false
    /// Positions are delivered twice.
    public var repeatPositions = false
    /// Requests (`ClusterControl`) sent from now on are dropped.
    public var loseRequests = false
    /// Positions wait in `held` until `releaseHeld()`.
    public var holdPositions = false
    private var held: [(from: ObjectIdentifier, positions: [StreamPosition])] = []

    public init(loop: any LoopExecutor) { self.loop = loop }

    /// A node's fabric.
    public func join() -> MemoryFabric {
        let fabric = MemoryFabric(cluster: self)
        nodes.append(fabric)
        return fabric
    }

    /// The node is gone: it hears nothing more.
    public func remove(_ fabric: MemoryFabric) { nodes.removeAll { $0 === fabric } }

    /// Sends what `holdPositions` kept back, in announcement order.
    public func releaseHeld() {
        let batches = held
        held = []
        for batch in batches { send(batch.positions, from: batch.from) }
    }

    func announce(_ positions: [StreamPosition], from fabric: MemoryFabric) {
        if losePositions { return }
        if holdPositions { return held.append((ObjectIdentifier(fabric), positions)) }
        send(positions, from: ObjectIdentifier(fabric))
        if repeatPositions { send(positions, from: ObjectIdentifier(fabric)) }
    }

    func sendLive(_ event: BusEvent, stream: String, from fabric: MemoryFabric) {
        toOthers(of: ObjectIdentifier(fabric)) { $0.live?(event, stream) }
    }

    func send(_ control: ClusterControl, from fabric: MemoryFabric) {
        if loseRequests { return }
        toOthers(of: ObjectIdentifier(fabric)) { $0.control?(control) }
    }

    private func send(_ positions: [StreamPosition], from sender: ObjectIdentifier) {
        toOthers(of: sender) { $0.positions?(positions) }
    }

    /// Runs `deliver` for every node but `sender`, each as a job on the loop.
    private func toOthers(of sender: ObjectIdentifier, _ deliver: @escaping (MemoryFabric) -> Void) {
        for node in nodes where ObjectIdentifier(node) != sender {
            loop.execute(with: node, deliver)
        }
    }
}

/// One node's side of a `MemoryCluster`.
public final class MemoryFabric: ClusterFabric {
    private unowned let cluster: MemoryCluster
    fileprivate var positions: (([StreamPosition]) -> Void)?
    fileprivate var live: ((BusEvent, String) -> Void)?
    fileprivate var control: ((ClusterControl) -> Void)?

    init(cluster: MemoryCluster) { self.cluster = cluster }

    public func announce(_ positions: [StreamPosition]) { cluster.announce(positions, from: self) }

    public func sendLive(_ event: BusEvent, stream: String) { cluster.sendLive(event, stream: stream, from: self) }

    public func send(_ control: ClusterControl) { cluster.send(control, from: self) }

    public func receive(
        positions: @escaping ([StreamPosition]) -> Void,
        live: @escaping (BusEvent, String) -> Void,
        control: @escaping (ClusterControl) -> Void
    ) {
        self.positions = positions
        self.live = live
        self.control = control
    }
}
