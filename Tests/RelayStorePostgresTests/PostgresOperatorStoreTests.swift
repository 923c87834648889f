import Foundation
import Logging
import PostgresNIO
import RelayCore
import Testing

@testable import RelayStorePostgres

/// `PostgresOperatorStore`, what `clawrelay devices|accounts|conversations|approvals|pair-link|
/// audit --protocol push` read and write on a relay in PostgreSQL, against a real server.
@Suite(.timeLimit(.minutes(1))) struct PostgresOperatorStoreTests {
    /// The store opened on the fixture's database; its calls block, so they run on a thread of
    /// their own (never on the cooperative pool).
    func withStore<R: Sendable>(_ fixture: JournalFixture, _ body: @escaping @Sendable (PostgresOperatorStore) throws -> R) async throws -> R {
        let (settings, logger) = (fixture.database.settings, fixture.database.logger)
        return try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        let store = try PostgresOperatorStore(settings: settings, logger: logger)
                        defer { store.close() }
                        return try body(store)
                    }
                )
            }.start()
        }
    }

    @Test func devicesChangeStatusAdminAndPushTargetsOnlyAsTheCommandsAllow() async throws {
        let fixture = try await JournalFixture()
        try await fixture.store(deviceRecord("phone", createdAt: 1))
        try await fixture.store(deviceRecord("tablet", createdAt: 2))
        let token = String(repeating: "ab", count: 32)
        let (devices, revoked, unknown, adminWhileRevoked, allowed, notAllowed) = try await withStore(fixture) { store in
            (
                try store.devices().map(\.id), try store.setStatus(deviceID: "tablet", .revoked), try store.setStatus(deviceID: "ghost", .revoked),
                try store.setAdmin(deviceID: "tablet", true), try store.allow(deviceID: "tablet")?.status, try store.allow(deviceID: "phone")
            )
        }
        #expect(devices == ["phone", "tablet"], "oldest first")
        #expect(revoked && !unknown)
        #expect(!adminWhileRevoked, "only an approved device becomes an admin")
        #expect(allowed == .revoked, "allow returns the record as it was")
        #expect(notAllowed == nil, "an approved device has nothing to allow")
        #expect(try await fixture.device("tablet")?.status == .unpaired)

        let (admin, set, refused, listing, removed, removedAgain) = try await withStore(fixture) { store in
            (
                try store.setAdmin(deviceID: "phone", true), try store.setPushTarget(deviceID: "phone", kind: "apns", token: token, at: 7),
                try store.setPushTarget(deviceID: "tablet", kind: "apns", token: token, at: 7), try store.pushTargetListing(),
                try store.removePushTarget(deviceID: "phone", kind: "apns"), try store.removePushTarget(deviceID: "phone", kind: "apns")
            )
        }
        #expect(admin && set && !refused)
        #expect(try await fixture.device("phone")?.isAdmin == true)
        let target = try #require(listing["phone"]?.first)
        #expect(listing.count == 1 && target.retiredAt == nil && !target.target.contains(token), "one target, its token redacted: \(listing)")
        #expect(removed && !removedAgain)
        await fixture.stop()
    }

    @Test func idsResolveWholeOrByAUniquePrefixOfDevicesAndPendingRequests() async throws {
        let fixture = try await JournalFixture()
        try await fixture.store(deviceRecord("abcdefgh-one"))
        try await fixture.store(deviceRecord("abcdefgh-two"))
        let pending = PendingPairing(deviceID: "pendingx-three", claimedName: "P", deviceInfoJSON: nil, createdAt: 1, expiresAt: 2)
        try await fixture.run { connection, logger in
            try await PostgresOperatorQueries.upsertPending(connection, pending, holder: nil, logger: logger)
        }
        let (whole, prefix, unknown) = try await withStore(fixture) { store in
            (
                try store.resolve("abcdefgh-one", as: .device), try store.resolve("pendingx", as: .device),
                try store.resolve("nobody-at-all", as: .device)
            )
        }
        #expect(whole == "abcdefgh-one" && prefix == "pendingx-three" && unknown == "nobody-at-all")
        let ambiguous = try await withStore(fixture) { store in Result { try store.resolve("abcdefgh", as: .device) } }
        #expect(throws: IDLookupError.self) { try ambiguous.get() }
        let short = try await withStore(fixture) { store in Result { try store.resolve("abc", as: .device) } }
        #expect(throws: IDLookupError.self) { try short.get() }
        let conversation = try await withStore(fixture) { store in try store.resolve("abcdefgh", as: .conversation) }
        #expect(conversation == "abcdefgh", "devices are not conversations")
        await fixture.stop()
    }

    @Test func aQueuedCommandIsSeenByTheRelayAndItsResultByTheCommand() async throws {
        let fixture = try await JournalFixture()
        let id = try await withStore(fixture) { store in try store.enqueue(.revoke, deviceID: "phone", userID: nil, at: 5) }
        let solo = NodeIncarnation(node: "solo")
        let pending = try await fixture.run { connection, logger in
            try await PostgresControlQueries.open(connection, for: solo, after: 0, logger: logger)
        }
        #expect(pending == [OperatorCommand(id: id, action: .revoke, deviceID: "phone", userID: nil)])
        #expect(try await withStore(fixture) { store in try store.result(ofCommand: id) } == nil, "not answered yet")
        try await fixture.run { connection, logger in
            try await PostgresControlQueries.acknowledge(connection, id: id, node: solo.node, result: "revoked", at: 6, logger: logger)
        }
        #expect(try await withStore(fixture) { store in try store.result(ofCommand: id) } == "revoked")
        await fixture.stop()
    }

    @Test func pushAttemptsAreFilteredByTimeDeviceAndPosition() async throws {
        let fixture = try await JournalFixture()
        func attempt(_ at: Int64, _ device: String) -> PushAttempt {
            PushAttempt(timeMillis: at, deviceID: device, conversationID: "c1", sink: "ntfy", target: "ntfy", status: 200, outcome: .sent, reason: "")
        }
        fixture.journal.record([attempt(10, "phone-0001"), attempt(20, "phone-0002"), attempt(30, "phone-0001"), attempt(40, "tab")], userID: "ann")
        await fixture.settle()
        let (all, newest, since, byPrefix, byWhole, after) = try await withStore(fixture) { store in
            (
                try store.pushAttempts(since: nil, deviceID: nil, afterID: 0, limit: 10, newest: false),
                try store.pushAttempts(since: nil, deviceID: nil, afterID: 0, limit: 2, newest: true),
                try store.pushAttempts(since: 25, deviceID: nil, afterID: 0, limit: 10, newest: false),
                try store.pushAttempts(since: nil, deviceID: "phone-00", afterID: 0, limit: 10, newest: false),
                try store.pushAttempts(since: nil, deviceID: "tab", afterID: 0, limit: 10, newest: false),
                try store.pushAttempts(since: nil, deviceID: nil, afterID: 0, limit: 1, newest: false)
            )
        }
        #expect(all.map(\.attempt.timeMillis) == [10, 20, 30, 40] && all.allSatisfy { $0.userID == "ann" })
        #expect(newest.map(\.attempt.timeMillis) == [30, 40], "the newest, oldest first")
        #expect(since.map(\.attempt.timeMillis) == [30, 40])
        #expect(byPrefix.map(\.attempt.timeMillis) == [10, 20, 30], "8 characters or more: the ids they start")
        #expect(byWhole.map(\.attempt.timeMillis) == [40], "shorter: the whole id")
        #expect(after.map(\.attempt.timeMillis) == [10])
        await fixture.stop()
    }

    @Test func conversationsApprovalsAccountsAndPairingLinksReadAsTheCommandsPrintThem() async throws {
        let fixture = try await JournalFixture()
        let journal = fixture.journal
        let old = try await awaiting { journal.resolveConversation(.main, userID: "u1", draft: ConversationDraft(), now: 1, completion: $0) }
        let new = try await awaiting { journal.resolveConversation(.session("s"), userID: "u2", draft: ConversationDraft(), now: 9, completion: $0) }
        journal.recordAccount(AccountStatus(name: "work", kind: "clawline", state: "linked", detail: "", updatedAt: 3))
        await fixture.settle()
        let hash = String(repeating: "f", count: 64)
        let (everyone, mine, shown, missing, bound, unbound, accounts, fingerprint, approvals) = try await withStore(fixture) { store in
            (
                try store.conversations(userID: nil, limit: 10), try store.conversations(userID: "u1", limit: 10),
                try store.conversation(id: old.id, events: 5), try store.conversation(id: "cv_none", events: 5),
                try store.bind(conversationID: old.id, backend: "claude", at: 20),
                try store.bind(conversationID: "cv_none", backend: "claude", at: 20),
                try store.accounts(), try store.addPairingLink(tokenHash: hash, expiresAt: 99), try store.approvals(pendingOnly: false, limit: 5)
            )
        }
        #expect(everyone.map(\.conversation.id) == [new.id, old.id], "most recently active first")
        #expect(mine.map(\.conversation.id) == [old.id] && mine.first?.events == 0)
        #expect(shown?.conversation.id == old.id && shown?.events.isEmpty == true && shown?.usage.runs == 0)
        #expect(missing == nil && bound && !unbound)
        #expect(try await awaiting { journal.conversation(id: old.id, completion: $0) }?.backend == "claude")
        #expect(accounts.map(\.name) == ["work"])
        let stored = try await fixture.run { connection, logger in
            try await PostgresPairingLinkQueries.isUsable(connection, tokenHash: hash, now: 50, logger: logger)
        }
        #expect(stored && fingerprint.count == 16)
        #expect(
            try await fixture.run { connection, logger in try await PostgresPairingLinkQueries.fingerprint(connection, logger: logger) }
                == fingerprint
        )
        #expect(approvals.isEmpty)
        #expect(fixture.errors.all.isEmpty)
        await fixture.stop()
    }

    @Test func approvalsListPendingOrAllAndUsageAddsUpAConversationsRuns() async throws {
        let fixture = try await JournalFixture()
        let asked = PostgresUsageJournalTests.approval(String(repeating: "a", count: 32), summary: "ls")
        let decided = PostgresUsageJournalTests.approval(String(repeating: "b", count: 32), summary: "touch x")
        let by = ApprovalDecider(deviceID: "phone", name: "Ann's iPhone", protocolName: "clawline")
        fixture.journal.saveApproval(ApprovalRecord(approval: asked, resolution: nil))
        fixture.journal.saveApproval(
            ApprovalRecord(approval: decided, resolution: ApprovalResolution(decision: .allowOnce, cause: .decided, by: by, at: 2_000))
        )
        for (run, cost, tokens) in [("r1", 0.25, 10), ("r2", 0.5, 5)] {
            var report = TurnReport()
            (report.costUSD, report.inputTokens, report.outputTokens, report.permissionDenials) = (cost, tokens, 1, 1)
            fixture.journal.saveTurnReport(TurnReportRecord(runID: run, userID: "u", conversationID: "c1", backend: "claude", report: report, at: 1))
        }
        await fixture.settle()
        let (pending, all) = try await withStore(fixture) { store in
            (try store.approvals(pendingOnly: true, limit: 10), try store.approvals(pendingOnly: false, limit: 10))
        }
        #expect(pending.map(\.id) == [asked.id])
        #expect(all.map(\.id) == [asked.id, decided.id], "same time: by id")
        let row = try #require(all.last)
        #expect(row.decision == "allow-once" && row.cause == "decided" && row.decidedBy == "Ann's iPhone" && row.decidedFrom == "clawline")
        #expect(row.deviceID == "phone" && row.resolvedAt == 2_000 && row.toolName == "Bash" && row.summary == "touch x")
        let usage = try await fixture.run { connection, logger in
            try await PostgresUsageQueries.totals(connection, conversationID: "c1", logger: logger)
        }
        #expect(usage == UsageTotals(runs: 2, costUSD: 0.75, inputTokens: 15, outputTokens: 2, permissionDenials: 2))
        let empty = try await fixture.run { connection, logger in
            try await PostgresUsageQueries.totals(connection, conversationID: "c2", logger: logger)
        }
        #expect(empty == UsageTotals(runs: 0, costUSD: nil, inputTokens: 0, outputTokens: 0, permissionDenials: 0))
        await fixture.stop()
    }
}
