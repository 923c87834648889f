import Foundation
import Logging
import PostgresNIO
import RelayCore

/// Operator commands as control messages (migration 9): `clawrelay devices …` queues a command
/// for the node that holds what it acts on (the node of a pending pairing request) or for every
/// live node, and wakes the nodes with a NOTIFY on `channel`; each node that ran it leaves an
/// acknowledgement; `settle` writes the command's one answer.
enum PostgresControlQueries {
    /// The channel a queued command is announced on (its id as the payload).
    static let channel = "clawrelay_operator"

    /// The live node incarnations: registered, and not named dead by `relay_sweep_nodes` (lease
    /// expired or lock gone).
    static let liveNodes =
        "SELECT node_id, incarnation, started_at FROM nodes WHERE incarnation NOT IN (SELECT o_incarnation FROM relay_sweep_nodes())"

    /// Queues a command and announces it, in one transaction; returns its id. Approving or
    /// denying a device with a pending request goes to the node incarnation holding the request
    /// (alive or not: a dead one gets its answer from `settle`); anything else goes to every node.
    static func enqueue(
        _ connection: PostgresConnection,
        action: OperatorCommand.Action,
        deviceID: String,
        userID: String?,
        at millis: Int64,
        logger: Logger
    ) async throws -> Int64 {
        try await connection.transaction(logger) {
            var target: (node: String?, incarnation: UUID?) = (nil, nil)
            if action == .approve || action == .deny {
                let rows = try await connection.query(
                    "SELECT node_id, incarnation FROM pending_pairings WHERE device_id = \(deviceID) AND incarnation IS NOT NULL",
                    logger: logger
                )
                for try await (node, incarnation) in rows.decode((String?, UUID?).self) { target = (node, incarnation) }
            }
            let rows = try await connection.query(
                """
                INSERT INTO operator_commands (action, device_id, user_id, created_ms, node_id, incarnation)
                VALUES (\(action.rawValue), \(deviceID), \(userID), \(millis), \(target.node), \(target.incarnation)) RETURNING id
                """,
                logger: logger
            )
            var id: Int64?
            for try await value in rows.decode(Int64.self) { id = value }
            guard let id else { throw PostgresStoreError(code: .rejected, message: "storing an operator command returned no id") }
            try await connection.query("SELECT pg_notify(\(channel), \(String(id)))", logger: logger)
            return id
        }
    }

    /// The open commands after `id` that `node` must run: those for its incarnation, and those
    /// for every node that it has not acknowledged yet; in order; unknown actions are skipped.
    static func open(_ connection: PostgresConnection, for node: NodeIncarnation, after id: Int64, logger: Logger) async throws -> [OperatorCommand] {
        let rows = try await connection.query(
            """
            SELECT id, action, device_id, user_id FROM operator_commands c WHERE id > \(id) AND done_ms IS NULL
              AND (c.incarnation = \(node.incarnation) OR (c.incarnation IS NULL
                AND NOT EXISTS (SELECT 1 FROM operator_acks a WHERE a.command_id = c.id AND a.node_id = \(node.node))))
            ORDER BY id
            """,
            logger: logger
        )
        var commands: [OperatorCommand] = []
        for try await (id, action, deviceID, userID) in rows.decode((Int64, String, String, String?).self) {
            guard let action = OperatorCommand.Action(rawValue: action) else { continue }
            commands.append(OperatorCommand(id: id, action: action, deviceID: deviceID, userID: userID))
        }
        return commands
    }

    /// Records what `node` made of the command, then settles it, in one transaction.
    static func acknowledge(
        _ connection: PostgresConnection,
        id: Int64,
        node: String,
        result: String,
        at millis: Int64,
        logger: Logger
    ) async throws {
        try await connection.transaction(logger) {
            try await connection.query(
                """
                INSERT INTO operator_acks (command_id, node_id, result, acked_ms) VALUES (\(id), \(node), \(result), \(millis))
                ON CONFLICT DO NOTHING
                """,
                logger: logger
            )
            _ = try await settle(connection, id: id, at: millis, logger: logger)
        }
    }

    /// The command's answer, written now if it is due, else nil. A command for one incarnation
    /// is answered by that node's acknowledgement, or, when the node is dead, by a sentence saying
    /// so; a command for every node once every live node that started before it was queued
    /// acknowledged it (at least one).
    ///
    /// - Important: in the caller's transaction: the command's row lock makes the answer once.
    static func settle(_ connection: PostgresConnection, id: Int64, at millis: Int64, logger: Logger) async throws -> String? {
        let command = try await connection.query(
            "SELECT node_id, incarnation, result, done_ms IS NOT NULL, queued_at FROM operator_commands WHERE id = \(id) FOR UPDATE",
            logger: logger
        )
        var found: (node: String?, incarnation: UUID?, result: String?, done: Bool, queued: Date)?
        for try await row in command.decode((String?, UUID?, String?, Bool, Date).self) { found = row }
        guard let found else { return nil }
        if found.done { return found.result ?? "" }
        let acks = try await acknowledgements(connection, id: id, logger: logger)
        let answer: String?
        if let incarnation = found.incarnation {
            let node = found.node ?? "\(incarnation)"
            if let ack = acks.first(where: { $0.node == node }) {
                answer = ack.result
            } else if try await !isLive(connection, incarnation, logger: logger) {
                answer = "node \(node), which held the request, stopped before it answered; the device must ask to pair again"
            } else {
                answer = nil
            }
        } else {
            let required = try await liveNodes(connection, startedBy: found.queued, logger: logger)
            answer = !acks.isEmpty && required.isSubset(of: acks.map(\.node)) ? combined(acks) : nil
        }
        guard let answer else { return nil }
        try await connection.query("UPDATE operator_commands SET done_ms = \(millis), result = \(answer) WHERE id = \(id)", logger: logger)
        return answer
    }

    /// One answer from the nodes' own: theirs when they agree, else each node's.
    static func combined(_ acks: [(node: String, result: String)]) -> String {
        if Set(acks.map(\.result)).count == 1 { return acks[0].result }
        return acks.map { "\($0.node): \($0.result)" }.joined(separator: "; ")
    }

    private static func acknowledgements(_ connection: PostgresConnection, id: Int64, logger: Logger) async throws -> [(node: String, result: String)]
    {
        let rows = try await connection.query(
            "SELECT node_id, result FROM operator_acks WHERE command_id = \(id) ORDER BY node_id COLLATE \"C\"",
            logger: logger
        )
        var acks: [(node: String, result: String)] = []
        for try await (node, result) in rows.decode((String, String).self) { acks.append((node, result)) }
        return acks
    }

    private static func isLive(_ connection: PostgresConnection, _ incarnation: UUID, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            "SELECT count(*) FROM (\(unescaped: liveNodes)) live WHERE incarnation = \(incarnation)",
            logger: logger
        )
        for try await count in rows.decode(Int64.self) { return count > 0 }
        return false
    }

    private static func liveNodes(_ connection: PostgresConnection, startedBy queued: Date, logger: Logger) async throws -> Set<String> {
        let rows = try await connection.query("SELECT node_id FROM (\(unescaped: liveNodes)) live WHERE started_at <= \(queued)", logger: logger)
        var nodes: Set<String> = []
        for try await node in rows.decode(String.self) { nodes.insert(node) }
        return nodes
    }
}
