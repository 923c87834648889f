import RelayCore

/// Opens the upstream accounts' links. A relay on its own opens each at once. In a cluster an
/// account is a singleton held by one node (its lease): a node opens an account's link when it
/// first holds it, and never opens the others' (their turns are handed to the holder). A node
/// loses a lease only by being declared dead, and then it exits, so a link once open stays open.
/// A node that takes an account builds it again first (`rebuild`), from the credential files
/// the cluster shares (`AccountFileSync` wrote them before the lease was reported), so it
/// presents the account's identity upstream, not one of its own; while they could not be taken
/// (`ready` false: PostgreSQL or the disk failed) the link stays closed and is tried again at
/// the next heartbeat.
///
/// - Important: loop thread only.
final class UpstreamLinks {
    private let node: NodeIncarnation?
    /// Whether the account's shared files are in place here.
    private let ready: (String) -> Bool
    /// Builds the account again and returns what opens its new link (nil: open the first one).
    private let rebuild: (String) -> (() -> Void)?
    /// Links not opened yet, by account name.
    private var closed: [String: () -> Void] = [:]

    /// `node`: this cluster node; nil for a relay on its own.
    init(node: NodeIncarnation?, ready: @escaping (String) -> Bool = { _ in true }, rebuild: @escaping (String) -> (() -> Void)? = { _ in nil }) {
        self.node = node
        self.ready = ready
        self.rebuild = rebuild
    }

    /// New accounts (at start, or added by a reload): opened now on a relay on its own, and in a
    /// cluster once this node holds them.
    func add(_ links: [(account: String, connect: () -> Void)]) {
        for link in links {
            if node == nil { link.connect() } else { closed[link.account] = link.connect }
        }
    }

    /// Who holds each account now (after each heartbeat): opens those this node holds.
    func held(_ leases: [AccountLease]) {
        for lease in leases where lease.holder == node && closed[lease.account] != nil && ready(lease.account) {
            guard let connect = closed.removeValue(forKey: lease.account) else { continue }
            (rebuild(lease.account) ?? connect)()
        }
    }
}
