import Foundation
import PostgresNIO
import RelayCore
import Testing

@testable import RelayStorePostgres

/// Assets, accounts, run reports and approvals through the journal, and the operator commands and
/// pairing links the relay and the CLI share, as the SQLite store keeps them.
@Suite(.timeLimit(.minutes(1))) struct PostgresUsageJournalTests {
    @Test func anAssetIsStoredReadBackAndNotStoredTwice() async throws {
        let fixture = try await JournalFixture()
        // The file's bytes go to PostgreSQL with the record (migration 10), so it must exist.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("clawrelay-asset-\(UUID().uuidString)").path
        try Data("image".utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let asset = AssetRecord(id: "a1", userID: "u", mimeType: "image/png", size: 5, path: file, createdAt: 42)
        try await awaiting { fixture.journal.saveAsset(asset, completion: $0) }
        #expect(try await awaiting { fixture.journal.asset(id: "a1", completion: $0) } == asset)
        #expect(try await awaiting { fixture.journal.asset(id: "a2", completion: $0) } == nil)
        await #expect(throws: PostgresStoreError.self) { try await awaiting { fixture.journal.saveAsset(asset, completion: $0) } }
        await fixture.stop()
    }

    @Test func accountsAreRecordedReplacedForgottenAndCleared() async throws {
        let fixture = try await JournalFixture()
        let accounts = { try await fixture.run { connection, logger in try await PostgresAccountQueries.all(connection, logger: logger) } }
        let work = AccountStatus(name: "work", kind: "clawline", state: "linking", detail: "", updatedAt: 1)
        let home = AccountStatus(name: "home", kind: "discord", state: "linked", detail: "as bot", updatedAt: 2)
        fixture.journal.recordAccount(work)
        fixture.journal.recordAccount(home)
        var linked = work
        linked.state = "linked"
        linked.detail = "since 3"
        linked.updatedAt = 3
        fixture.journal.recordAccount(linked)
        #expect(try await accounts() == [home, linked], "by name; the latest state replaces the one before")
        fixture.journal.forgetAccount("home")
        fixture.journal.forgetAccount("unknown")
        #expect(try await accounts() == [linked])
        try await fixture.run { connection, logger in try await PostgresAccountQueries.clear(connection, logger: logger) }
        #expect(try await accounts().isEmpty)
        #expect(fixture.errors.all.isEmpty)
        await fixture.stop()
    }

    @Test func aRunReportIsStoredWithEveryFieldAndReplaced() async throws {
        let fixture = try await JournalFixture()
        let full = TurnReportRecord(
            runID: "r1",
            userID: "u",
            conversationID: "c1",
            backend: "claude",
            report: TurnReport(
                costUSD: 0.25,
                inputTokens: 10,
                outputTokens: 2,
                cacheReadTokens: 3,
                cacheCreationTokens: 4,
                durationMillis: 1_500,
                modelTurns: 2,
                permissionDenials: 1,
                terminalReason: "completed"
            ),
            at: 100
        )
        let bare = TurnReportRecord(runID: "r2", userID: "u", conversationID: "c1", backend: "codex", report: TurnReport(), at: 200)
        fixture.journal.saveTurnReport(full)
        fixture.journal.saveTurnReport(bare)
        let report = { (run: String) in
            try await fixture.run { connection, logger in try await PostgresUsageQueries.report(connection, runID: run, logger: logger) }
        }
        #expect(try await report("r1") == full)
        #expect(try await report("r2") == bare, "what the backend did not say stays unknown")
        var again = full
        again.report.costUSD = nil
        again.at = 300
        fixture.journal.saveTurnReport(again)
        #expect(try await report("r1") == again)
        #expect(fixture.errors.all.isEmpty)
        await fixture.stop()
    }

    @Test func approvalsAreStoredResolvedAndThoseLeftPendingCancelledAtStart() async throws {
        let fixture = try await JournalFixture()
        let asked = Self.approval(String(repeating: "a", count: 32), summary: String(repeating: "é", count: 1_200))
        let decided = Self.approval(String(repeating: "b", count: 32), summary: "touch x")
        fixture.journal.saveApproval(ApprovalRecord(approval: asked, resolution: nil))
        fixture.journal.saveApproval(ApprovalRecord(approval: decided, resolution: nil))
        let by = ApprovalDecider(deviceID: "phone", name: "Ann's iPhone", protocolName: "clawline")
        fixture.journal.saveApproval(
            ApprovalRecord(approval: decided, resolution: ApprovalResolution(decision: .allowOnce, cause: .decided, by: by, at: 2_000))
        )
        await fixture.settle()
        #expect(
            try await Self.rows(fixture) == [
                [
                    asked.id, "a-short", "u", "c1", "run", "claude", "Bash", String(repeating: "é", count: 1_000), "1000", "601000", nil, nil, nil,
                    nil, nil, nil,
                ],
                [
                    decided.id, "b-short", "u", "c1", "run", "claude", "Bash", "touch x", "1000", "601000", "allow-once", "decided", "phone",
                    "Ann's iPhone", "clawline", "2000",
                ],
            ]
        )
        fixture.journal.cancelStaleApprovals(now: 9_000)
        await fixture.settle()
        let after = try await Self.rows(fixture)
        #expect(after[0].suffix(6) == ["deny", "cancelled", "", "the relay", "relay", "9000"], "the pending one is cancelled by the relay")
        #expect(after[1].suffix(6) == ["allow-once", "decided", "phone", "Ann's iPhone", "clawline", "2000"], "a resolved one is left alone")
        #expect(fixture.errors.all.isEmpty)
        await fixture.stop()
    }

    @Test func operatorCommandsRunInOrderOnceAndReportTheirResult() async throws {
        let fixture = try await JournalFixture()
        #expect(try await fixture.run { connection, logger in try await PostgresOperatorQueries.lastID(connection, logger: logger) } == 0)
        let ids = try await fixture.run { connection, logger in
            [
                try await PostgresControlQueries.enqueue(connection, action: .approve, deviceID: "d1", userID: "u", at: 1, logger: logger),
                try await PostgresControlQueries.enqueue(
                    connection,
                    action: .bindConversation,
                    deviceID: "c1",
                    userID: "claude",
                    at: 2,
                    logger: logger
                ),
                try await PostgresControlQueries.enqueue(connection, action: .revoke, deviceID: "d2", userID: nil, at: 3, logger: logger),
            ]
        }
        #expect(ids == ids.sorted() && Set(ids).count == 3)
        try await fixture.run { connection, logger in
            try await connection.query(
                "INSERT INTO operator_commands (action, device_id, created_ms) VALUES ('from-the-future', 'd', 4)",
                logger: logger
            )
        }
        let pending = { (after: Int64) in
            try await fixture.run { connection, logger in
                try await PostgresControlQueries.open(connection, for: NodeIncarnation(node: "solo"), after: after, logger: logger)
            }
        }
        #expect(
            try await pending(0) == [
                OperatorCommand(id: ids[0], action: .approve, deviceID: "d1", userID: "u"),
                OperatorCommand(id: ids[1], action: .bindConversation, deviceID: "c1", userID: "claude"),
                OperatorCommand(id: ids[2], action: .revoke, deviceID: "d2", userID: nil),
            ],
            "an action this binary does not know is skipped"
        )
        #expect(try await pending(ids[0]).map(\.id) == [ids[1], ids[2]])
        let result = { (id: Int64) in
            try await fixture.run { connection, logger in
                try await connection.transaction(logger) { try await PostgresControlQueries.settle(connection, id: id, at: 9, logger: logger) }
            }
        }
        #expect(try await result(ids[1]) == nil, "not done yet")
        try await fixture.run { connection, logger in
            try await PostgresControlQueries.acknowledge(connection, id: ids[1], node: "solo", result: "bound", at: 5, logger: logger)
        }
        #expect(try await result(ids[1]) == "bound")
        #expect(try await pending(0).map(\.id) == [ids[0], ids[2]], "a done command is not pending")
        #expect(try await fixture.run { connection, logger in try await PostgresOperatorQueries.lastID(connection, logger: logger) } == ids[2] + 1)
        await fixture.stop()
    }

    @Test func theFingerprintIsCreatedOnceAndLinksAreConsumedOnce() async throws {
        let fixture = try await JournalFixture()
        let fingerprint = {
            try await fixture.run { connection, logger in try await PostgresPairingLinkQueries.fingerprint(connection, logger: logger) }
        }
        let first = try await fingerprint()
        #expect(first.count == 16 && first.allSatisfy(\.isHexDigit))
        #expect(try await fingerprint() == first)
        let other = try await fixture.database.connect()
        #expect(try await PostgresPairingLinkQueries.fingerprint(other, logger: fixture.database.logger) == first, "every node reads the same")
        try await other.close()

        let consumed = try await fixture.run { connection, logger in
            try await PostgresPairingLinkQueries.addLink(connection, tokenHash: "h", expiresAt: 100, logger: logger)
            return [
                try await PostgresPairingLinkQueries.consumeLink(connection, tokenHash: "h", now: 100, logger: logger),
                try await PostgresPairingLinkQueries.consumeLink(connection, tokenHash: "h", now: 99, logger: logger),
                try await PostgresPairingLinkQueries.consumeLink(connection, tokenHash: "h", now: 50, logger: logger),
                try await PostgresPairingLinkQueries.consumeLink(connection, tokenHash: "unknown", now: 50, logger: logger),
            ]
        }
        #expect(consumed == [false, true, false, false], "not once expired; once; never unknown")
        let removed = try await fixture.run { connection, logger in
            for bot in ["a", "b", "c"] {
                try await PostgresPairingLinkQueries.setBotToken(connection, deviceID: "d", botID: bot, tokenHash: "t" + bot, now: 1, logger: logger)
            }
            return [
                try await PostgresPairingLinkQueries.removeBots(connection, deviceID: "d", botIDs: ["a", "x"], logger: logger),
                try await PostgresPairingLinkQueries.removeBots(connection, deviceID: "d", botIDs: nil, logger: logger),
            ]
        }
        #expect(removed == [1, 2])
        await fixture.stop()
    }

    static func approval(_ id: String, summary: String) -> Approval {
        Approval(
            id: id,
            shortID: id.prefix(1) + "-short",
            userID: "u",
            conversationID: "c1",
            runID: "run",
            backend: "claude",
            ask: ApprovalAsk(requestID: "r", toolName: "Bash", summary: summary, input: .object([:])),
            createdAt: 1_000,
            expiresAt: 601_000
        )
    }

    /// Every approval row as text, by id.
    static func rows(_ fixture: JournalFixture) async throws -> [[String?]] {
        try await fixture.run { connection, logger in
            let rows = try await connection.query(
                """
                SELECT id, short_id, user_id, conversation_id, run_id, backend, tool_name, summary, created_ms::text, expires_ms::text, decision,
                  cause, decided_by_device, decided_by_name, decided_by_protocol, resolved_ms::text
                FROM approvals ORDER BY id
                """,
                logger: logger
            )
            var all: [[String?]] = []
            for try await row in rows { all.append(try row.map { try $0.decode(String?.self) }) }
            return all
        }
    }
}
