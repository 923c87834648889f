import Logging

/// The durable side of upstream accounts' states (for `clawrelay accounts`).
public protocol AccountJournal: AnyObject {
    /// Stores an account's latest state; nobody waits.
    func recordAccount(_ status: AccountStatus)
    /// Forgets an account a reload removed; nobody waits.
    func forgetAccount(_ name: String)
}

/// The upstream accounts (one per `[[backends]]` entry of an upstream kind) and where each link
/// stands: what `backends.list`, `clawrelay accounts` and `/metrics` show.
///
/// - Important: loop thread only.
public final class Accounts {
    private let journal: AccountJournal
    private let clock: any Clock
    private let logger: Logger
    /// Each upstream account's kind and link state; built-in backends are not here.
    public private(set) var states: [String: (kind: String, state: LinkState)] = [:]
    /// Hears every report (the turns: in a cluster an account's turns wait for its first one).
    var onReport: ((String, LinkState) -> Void)?

    init(journal: AccountJournal, clock: any Clock, logger: Logger) {
        self.journal = journal
        self.clock = clock
        self.logger = logger
    }

    /// An upstream account exists; it counts as `connecting` until its link reports.
    public func register(_ name: String, kind: String) {
        if states[name] == nil { states[name] = (kind, .connecting) }
    }

    /// A reload removed the account and its link is closed: it is no longer shown.
    public func unregister(_ name: String) {
        states.removeValue(forKey: name)
        journal.forgetAccount(name)
    }

    /// An account's link changed state: logged, stored for the CLI, shown by `state(of:)`.
    public func report(_ name: String, kind: String, _ state: LinkState, _ detail: String) {
        states[name] = (kind, state)
        logger.info("upstream account", metadata: ["account": "\(name)", "kind": "\(kind)", "state": "\(state.rawValue)", "detail": "\(detail)"])
        journal.recordAccount(AccountStatus(name: name, kind: kind, state: state.rawValue, detail: detail, updatedAt: clock.nowMillis()))
        onReport?(name, state)
    }

    /// In a cluster: the state of an account another node holds, as its holder reported it
    /// (shown, not stored or logged here).
    func mirror(_ name: String, _ state: LinkState) {
        guard let known = states[name] else { return }
        states[name] = (known.kind, state)
    }

    /// An upstream account's link state; nil for a built-in backend (always ready).
    public func state(of name: String) -> LinkState? { states[name]?.state }
}
