import Foundation
import Logging
import PostgresNIO
import RelayCore
import Testing

@testable import RelayStorePostgres

/// Operator commands as control messages (`PostgresControlQueries`) between two registered
/// nodes on a real server: who runs a command, its one answer, a broadcast's acknowledgements,
/// and the answer a command for a dead node gets.
@Suite(.timeLimit(.minutes(1))) struct PostgresControlQueriesTests {
    func pending(_ device: String, _ created: Int64 = 1) -> PendingPairing {
        PendingPairing(deviceID: device, claimedName: device, deviceInfoJSON: nil, createdAt: created, expiresAt: created + 60_000)
    }

    func enqueue(_ connection: PostgresConnection, _ action: OperatorCommand.Action, _ device: String, _ logger: Logger) async throws -> Int64 {
        try await PostgresControlQueries.enqueue(connection, action: action, deviceID: device, userID: nil, at: 5, logger: logger)
    }

    func settle(_ connection: PostgresConnection, _ id: Int64, _ logger: Logger) async throws -> String? {
        try await connection.transaction(logger) { try await PostgresControlQueries.settle(connection, id: id, at: 9, logger: logger) }
    }

    @Test func anApprovalGoesToTheNodeHoldingTheRequestAndIsAnsweredOnce() async throws {
        let database = try await TestDatabase()
        try await withNodes(database, "n1", "n2") { nodes in
            let (one, two) = (nodes[0].identity, nodes[1].identity)
            let connection = try await database.connect()
            let logger = database.logger
            try await PostgresOperatorQueries.upsertPending(connection, pending("phone"), holder: two, logger: logger)
            let approve = try await enqueue(connection, .approve, "phone", logger)
            let revoke = try await enqueue(connection, .revoke, "tablet", logger)
            let forOne = try await PostgresControlQueries.open(connection, for: one, after: 0, logger: logger)
            let forTwo = try await PostgresControlQueries.open(connection, for: two, after: 0, logger: logger)
            #expect(forOne.map(\.id) == [revoke], "the approval is not node 1's")
            #expect(forTwo.map(\.id) == [approve, revoke])
            #expect(try await settle(connection, approve, logger) == nil, "not answered yet")

            try await PostgresControlQueries.acknowledge(connection, id: approve, node: "n2", result: "approved", at: 6, logger: logger)
            try await PostgresControlQueries.acknowledge(connection, id: approve, node: "n2", result: "again", at: 7, logger: logger)
            #expect(try await settle(connection, approve, logger) == "approved", "the first answer stays")
            #expect(try await PostgresControlQueries.open(connection, for: two, after: 0, logger: logger).map(\.id) == [revoke])
            try await connection.close()
        }
    }

    @Test func aBroadcastIsAnsweredOnceEveryLiveNodeAcknowledgedIt() async throws {
        let database = try await TestDatabase()
        try await withNodes(database, "n1", "n2") { nodes in
            let (one, two) = (nodes[0].identity, nodes[1].identity)
            let connection = try await database.connect()
            let logger = database.logger
            let revoke = try await enqueue(connection, .revoke, "phone", logger)
            try await PostgresControlQueries.acknowledge(connection, id: revoke, node: one.node, result: "revoked", at: 6, logger: logger)
            #expect(try await settle(connection, revoke, logger) == nil, "node 2 has not run it yet")
            #expect(try await PostgresControlQueries.open(connection, for: one, after: 0, logger: logger).isEmpty, "node 1 ran it")
            #expect(try await PostgresControlQueries.open(connection, for: two, after: 0, logger: logger).map(\.id) == [revoke])
            try await PostgresControlQueries.acknowledge(connection, id: revoke, node: two.node, result: "revoked", at: 7, logger: logger)
            #expect(try await settle(connection, revoke, logger) == "revoked")

            let bind = try await enqueue(connection, .bindConversation, "c1", logger)
            try await PostgresControlQueries.acknowledge(connection, id: bind, node: one.node, result: "bound", at: 8, logger: logger)
            try await PostgresControlQueries.acknowledge(connection, id: bind, node: two.node, result: "no backend named x", at: 8, logger: logger)
            #expect(try await settle(connection, bind, logger) == "n1: bound; n2: no backend named x", "nodes that disagree are named")
            try await connection.close()
        }
    }

    @Test func aCommandForADeadNodeIsAnsweredAndItsRequestsAreNoLongerListed() async throws {
        let database = try await TestDatabase()
        try await withNodes(database, "n1", "doomed") { nodes in
            let (one, doomed) = (nodes[0].identity, nodes[1].identity)
            let connection = try await database.connect()
            let logger = database.logger
            try await PostgresOperatorQueries.upsertPending(connection, pending("phone", 1), holder: doomed, logger: logger)
            try await PostgresOperatorQueries.upsertPending(connection, pending("laptop", 2), holder: one, logger: logger)
            try await PostgresOperatorQueries.upsertPending(connection, pending("lone", 3), holder: nil, logger: logger)
            let listed = { try await PostgresOperatorQueries.pendingPairings(connection, logger: logger).map(\.deviceID) }
            #expect(try await listed() == ["phone", "laptop", "lone"])
            let approve = try await enqueue(connection, .approve, "phone", logger)
            let revoke = try await enqueue(connection, .revoke, "tablet", logger)
            try await PostgresControlQueries.acknowledge(connection, id: revoke, node: one.node, result: "revoked", at: 6, logger: logger)
            #expect(try await settle(connection, approve, logger) == nil, "its node lives")

            #expect(try await database.terminate("clawrelay:doomed:control") == 1)
            try await eventually("the doomed node's request unlisted") { try await listed() == ["laptop", "lone"] }
            let answer = try #require(try await settle(connection, approve, logger))
            #expect(answer.contains("node doomed") && answer.contains("stopped"), "\(answer)")
            #expect(try await settle(connection, revoke, logger) == "revoked", "the dead node is not waited for")

            // Removal by another holder leaves the row; its own holder's removal takes it.
            try await PostgresOperatorQueries.removePending(connection, deviceID: "laptop", protocolName: "clawline", holder: doomed, logger: logger)
            #expect(try await listed() == ["laptop", "lone"])
            try await PostgresOperatorQueries.removePending(connection, deviceID: "laptop", protocolName: "clawline", holder: one, logger: logger)
            #expect(try await listed() == ["lone"])
            try await connection.close()
        }
    }

    @Test func aQueuedCommandIsAnnouncedOnItsChannel() async throws {
        let database = try await TestDatabase()
        let listener = try await database.connect("listener")
        let connection = try await database.connect()
        let heard = try await listener.listen(on: PostgresControlQueries.channel) { notifications in
            let id = try await enqueue(connection, .refresh, "phone", database.logger)
            for try await notification in notifications { return (id, notification.payload) }
            return (id, "")
        }
        #expect(heard.1 == String(heard.0))
        try await connection.close()
        try await listener.close()
    }
}
