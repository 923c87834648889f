/// Each cluster node's presence of a device, kept where every node can read it: the node with a
/// device's sockets is the authority for them, and a device is as present as its most present live
/// node says (foreground > background > offline).
///
/// The hub uses it only in a cluster, and only when its journal implements it (PostgreSQL,
/// `MemoryJournal`); a relay on its own decides from its own `Presence`.
///
/// - Important: called on the loop; completions run on the loop, in order with the journal's
///   other calls (a node reads its own presence writes).
public protocol NodePresenceJournal: AnyObject {
    /// Records `state` as the device's presence on `node`; `offline` forgets it there.
    func recordPresence(deviceID: String, on node: NodeIncarnation, state: DevicePresence.State, now: Int64)
    /// The device's most present state over the live nodes (a node declared dead, or one whose
    /// lease lapsed, does not count); `offline` when no live node holds it.
    func clusterPresence(deviceID: String, completion: @escaping (Result<DevicePresence.State, any Error>) -> Void)
}

extension DevicePresence.State {
    /// The most present of `states` (foreground > background > offline); offline for none.
    public static func mostPresent<S: Sequence>(_ states: S) -> Self where S.Element == Self {
        states.min { $0.rank < $1.rank } ?? .offline
    }

    private var rank: Int {
        switch self {
        case .foreground: 0
        case .background: 1
        case .offline: 2
        }
    }
}
