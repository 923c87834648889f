/// An upstream account of a cluster and the node incarnation that holds it now (nil: none holds
/// it: its holder died and no survivor has taken it yet).
public struct AccountLease: Sendable, Equatable {
    public var account: String
    public var holder: NodeIncarnation?
    /// The state the holder's link last reported (nil: none yet).
    public var state: LinkState?

    public init(account: String, holder: NodeIncarnation?, state: LinkState? = nil) {
        self.account = account
        self.holder = holder
        self.state = state
    }
}

/// Where a cluster node runs a turn whose backend may be an upstream account: an account is a
/// cluster-wide singleton, connected only on the node that holds its lease, so its turns run
/// there. Built-in backends (echo, command, Claude Code) run on any node.
struct AccountHolders {
    enum Route: Equatable {
        /// Not a leased account, or held by this node: run it here.
        case here
        /// Held by another node: hand the turn to it.
        case node(NodeIncarnation)
        /// Leased, and nobody holds it now: the turn waits for a holder.
        case nobody
        /// Held by this node, whose link has not reported yet (it took the account just now): the
        /// turn waits for the first report rather than fail on a link still connecting.
        case linking
    }

    private(set) var leases: [String: NodeIncarnation?] = [:]
    /// Accounts whose link here reported a state other than `connecting`.
    private(set) var reported: Set<String> = []

    func route(_ backend: String, me: NodeIncarnation) -> Route {
        guard let lease = leases[backend] else { return .here }
        guard let holder = lease else { return .nobody }
        guard holder == me else { return .node(holder) }
        return reported.contains(backend) ? .here : .linking
    }

    /// The account's link here reported `state`; true when it is the first report past connecting.
    mutating func linkReported(_ account: String, _ state: LinkState) -> Bool {
        guard state != .connecting else { return false }
        return reported.insert(account).inserted
    }

    /// Replaces what is known; true when a holder changed.
    mutating func update(_ next: [AccountLease]) -> Bool {
        var fresh: [String: NodeIncarnation?] = [:]
        for lease in next { fresh[lease.account] = .some(lease.holder) }
        defer { leases = fresh }
        return fresh != leases
    }

    /// `node` is dead: it holds nothing now (until the next answer names the new holders).
    mutating func forget(_ node: NodeIncarnation) {
        for (account, holder) in leases where holder == node { leases[account] = .some(nil) }
    }

    /// True when this node holds at least one account.
    func holdsAny(_ me: NodeIncarnation) -> Bool { leases.values.contains { $0 == me } }
}
