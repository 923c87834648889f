import Foundation
import Logging
import PostgresNIO
import RelayCore
import Synchronization

/// A node's membership (SCALE-OUT.md §4.9): its row in `nodes` with a fresh incarnation and a
/// lease, the node's advisory lock held on its own control connection, heartbeats, and the sweep
/// that finds dead nodes. Declaring one dead (failing its running turns, handing its queued ones
/// to a survivor) is `PostgresTurnLedger.declareDead`'s: the one way a dead node's turns end.
///
/// - Important: a heartbeat that updates no row means this incarnation was declared dead: the
///   node must stop acting (crash-only restart with a new incarnation).
public final class PostgresNode: Sendable {
    public let identity: NodeIncarnation
    private let settings: PostgresSettings
    private let lease: Duration
    let logger: Logger
    private let connection: Mutex<PostgresConnection?> = Mutex(nil)
    private let registrations = Mutex(0)

    public init(settings: PostgresSettings, identity: NodeIncarnation, lease: Duration = .seconds(10), logger: Logger) {
        self.settings = settings
        self.identity = identity
        self.lease = lease
        self.logger = logger
    }

    /// Connects the control connection, takes the node's lock and registers this incarnation.
    /// Returns the earlier incarnation of the same node id it replaced (a restart), for the caller
    /// to declare dead (`PostgresTurnLedger.declareDead`; `sweep` names it too while it owns turns).
    ///
    /// - Important: once per incarnation. An incarnation that lost its control connection may
    ///   have been declared dead meanwhile: `resume` brings it back only if it was not.
    @discardableResult
    public func register() async throws -> NodeIncarnation? {
        guard
            registrations.withLock({ count in
                defer { count += 1 }
                return count == 0
            })
        else {
            throw PostgresStoreError(code: .rejected, message: "node \(identity) registered once already; a new start needs a new incarnation")
        }
        let control = try await connectHoldingLock()
        do {
            let rows = try await control.query(
                "SELECT o_previous FROM relay_register_node(\(identity.node), \(identity.incarnation), \(seconds(lease)))",
                logger: logger
            )
            var previous: NodeIncarnation?
            for try await incarnation in rows.decode(UUID.self) { previous = NodeIncarnation(node: identity.node, incarnation: incarnation) }
            connection.withLock { $0 = control }
            logger.info("postgres: node registered", metadata: ["node": "\(identity)"])
            return previous
        } catch {
            try? await control.close()
            if let error = error as? PostgresStoreError { throw error }
            throw PostgresStoreError(code: .rejected, message: "cannot register node \(identity.node): \(PostgresStoreError.summary(of: error))")
        }
    }

    /// After the control connection was lost (PostgreSQL restarted, the network cut it): connects
    /// again, takes the node's lock again and renews this incarnation's lease, if it is still
    /// registered. False when it was declared dead meanwhile (fenced): the node must stop.
    public func resume() async throws -> Bool {
        // The old session, if it still lives, holds the lock: it goes first.
        let old = connection.withLock { connection -> PostgresConnection? in
            defer { connection = nil }
            return connection
        }
        try? await old?.close()
        let control = try await connectHoldingLock()
        do {
            let renewed = try await renew(on: control)
            guard renewed else {
                try? await control.close()
                logger.error("postgres: this node was declared dead while it was cut off; its writes are fenced", metadata: ["node": "\(identity)"])
                return false
            }
            connection.withLock { $0 = control }
            logger.notice("postgres: node reconnected", metadata: ["node": "\(identity)"])
            return true
        } catch {
            try? await control.close()
            throw error
        }
    }

    /// Renews the lease; false when this incarnation was declared dead (fenced).
    public func heartbeat() async throws -> Bool {
        let renewed = try await renew(on: try control())
        if !renewed { logger.error("postgres: this node was declared dead; its writes are fenced", metadata: ["node": "\(identity)"]) }
        return renewed
    }

    private func renew(on control: PostgresConnection) async throws -> Bool {
        let rows = try await control.query(
            """
            UPDATE nodes SET heartbeat_at = now(), expires_at = now() + make_interval(secs => \(seconds(lease)))
            WHERE node_id = \(identity.node) AND incarnation = \(identity.incarnation) RETURNING 1
            """,
            logger: logger
        )
        var renewed = false
        for try await _ in rows.decode(Int.self) { renewed = true }
        return renewed
    }

    /// A new control connection holding the node's advisory lock (refused while another running
    /// node holds it: two nodes were given one node id).
    private func connectHoldingLock() async throws -> PostgresConnection {
        let configuration = try settings.configuration(applicationName: "clawrelay:\(identity.node):control")
        let control: PostgresConnection
        do {
            control = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        } catch {
            throw PostgresStoreError(
                code: .connectionLost,
                message: "cannot connect to PostgreSQL (\(settings)): \(PostgresStoreError.summary(of: error))"
            )
        }
        do {
            let locked = try await control.query(
                "SELECT pg_try_advisory_lock(hashtext(\("clawrelay-node:" + identity.node))::bigint)",
                logger: logger
            )
            var held = false
            for try await value in locked.decode(Bool.self) { held = value }
            guard held else {
                throw PostgresStoreError(
                    code: .rejected,
                    message: "node id \(identity.node) is in use by another running node; give each node its own [cluster] node_id"
                )
            }
            return control
        } catch {
            try? await control.close()
            if let error = error as? PostgresStoreError { throw error }
            throw PostgresStoreError(code: .rejected, message: "cannot lock node \(identity.node): \(PostgresStoreError.summary(of: error))")
        }
    }

    /// The dead node incarnations, changing nothing: nodes whose lease expired or whose lock is
    /// gone, and incarnations that own queued or running turns but no longer have a node row. They
    /// stay dead (and named by every sweep) until declared dead.
    public func sweep() async throws -> [NodeIncarnation] {
        let rows = try await control().query("SELECT o_node, o_incarnation FROM relay_sweep_nodes()", logger: logger)
        var dead: [NodeIncarnation] = []
        for try await (node, incarnation) in rows.decode((String, UUID).self) { dead.append(NodeIncarnation(node: node, incarnation: incarnation)) }
        return dead
    }

    /// Lets go of the leases this incarnation holds on accounts not in `accounts` (a reload
    /// dropped them), takes (when `take`) those of `accounts` no live node holds, and returns who holds each of
    /// them now (nil: nobody live), with the state its link last reported. Accounts are cluster-wide singletons: only the holder connects one.
    public func holdAccounts(_ accounts: [String], take: Bool) async throws -> [AccountLease] {
        let rows = try await control().query(
            "SELECT * FROM relay_hold_accounts(\(identity.node), \(identity.incarnation), \(accounts), \(take))",
            logger: logger
        )
        var held: [String: AccountLease] = [:]
        for try await (account, node, incarnation, state) in rows.decode((String, String, UUID, String?).self) {
            held[account] = AccountLease(
                account: account,
                holder: NodeIncarnation(node: node, incarnation: incarnation),
                state: state.flatMap(LinkState.init(rawValue:))
            )
        }
        return accounts.map { held[$0] ?? AccountLease(account: $0, holder: nil) }
    }

    /// Closes the control connection, which frees the node's lock: the next sweep names this
    /// incarnation dead, as after a crash.
    public func close() async {
        let control = connection.withLock { connection -> PostgresConnection? in
            defer { connection = nil }
            return connection
        }
        try? await control?.close()
    }

    func control() throws -> PostgresConnection {
        guard let control = connection.withLock({ $0 }), !control.isClosed else {
            throw PostgresStoreError(
                code: .connectionLost,
                message: "node \(identity.node) has no control connection (its lock is gone): register again"
            )
        }
        return control
    }

    private func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
