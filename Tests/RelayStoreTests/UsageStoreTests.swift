import Foundation
import RelayCore
import Testing

@testable import RelayStore

/// Run reports and approval records in SQLite: what `clawrelay conversations show` adds up and
/// `clawrelay approvals` lists.
@Suite struct UsageStoreTests {
    private func withJournal(_ body: (StoreJournal, Store) async throws -> Void) async throws {
        let directory = NSTemporaryDirectory() + "clawrelay-usage-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(dataDirectory: directory, executor: QueueLoop())
        defer { store.close() }
        try await body(StoreJournal(store: store) { what, error in Issue.record("\(what): \(error)") }, store)
    }

    private func settle(_ journal: StoreJournal) async {
        await withCheckedContinuation { continuation in journal.barrier { continuation.resume() } }
    }

    static func approval(_ id: String, conversation: String = "cv_1") -> Approval {
        Approval(
            id: id,
            shortID: String(id.prefix(4)),
            userID: "u",
            conversationID: conversation,
            runID: "run-\(id)",
            backend: "claude",
            ask: ApprovalAsk(requestID: "r", toolName: "Bash", summary: "touch x", input: .object([:])),
            createdAt: 1_000,
            expiresAt: 601_000
        )
    }

    @Test func reportsAddUpPerConversation() async throws {
        try await withJournal { journal, store in
            journal.saveTurnReport(
                TurnReportRecord(
                    runID: "a",
                    userID: "u",
                    conversationID: "cv_1",
                    backend: "claude",
                    report: TurnReport(costUSD: 0.5, inputTokens: 10, outputTokens: 2, permissionDenials: 1),
                    at: 1
                )
            )
            journal.saveTurnReport(
                TurnReportRecord(
                    runID: "b",
                    userID: "u",
                    conversationID: "cv_1",
                    backend: "claude",
                    report: TurnReport(costUSD: 0.25, inputTokens: 5, outputTokens: 1),
                    at: 2
                )
            )
            journal.saveTurnReport(TurnReportRecord(runID: "c", userID: "u", conversationID: "cv_2", backend: "claude", report: TurnReport(), at: 3))
            await settle(journal)
            let first = try store.read { db in try UsageQueries.totals(db, conversationID: "cv_1") }
            #expect(first == UsageTotals(runs: 2, costUSD: 0.75, inputTokens: 15, outputTokens: 3, permissionDenials: 1))
            let second = try store.read { db in try UsageQueries.totals(db, conversationID: "cv_2") }
            #expect(second.runs == 1 && second.costUSD == nil, "a run that reported no cost adds none")
        }
    }

    @Test func approvalsAreListedPendingThenResolvedAndStaleOnesAreCancelledAtStart() async throws {
        try await withJournal { journal, store in
            let asked = Self.approval(String(repeating: "a", count: 32))
            let decided = Self.approval(String(repeating: "b", count: 32))
            journal.saveApproval(ApprovalRecord(approval: asked, resolution: nil))
            journal.saveApproval(ApprovalRecord(approval: decided, resolution: nil))
            let by = ApprovalDecider(deviceID: "phone", name: "Ann's iPhone", protocolName: "clawline")
            journal.saveApproval(
                ApprovalRecord(approval: decided, resolution: ApprovalResolution(decision: .allowOnce, cause: .decided, by: by, at: 2_000))
            )
            await settle(journal)
            let pending = try store.read { db in try UsageQueries.approvals(db, pendingOnly: true, limit: 10) }
            #expect(pending.map(\.id) == [asked.id])
            let all = try store.read { db in try UsageQueries.approvals(db, pendingOnly: false, limit: 10) }
            let row = try #require(all.first { $0.id == decided.id })
            #expect(row.decision == "allow-once" && row.cause == "decided" && row.decidedBy == "Ann's iPhone" && row.decidedFrom == "clawline")
            journal.cancelStaleApprovals(now: 9_000)
            await settle(journal)
            let after = try store.read { db in try UsageQueries.approvals(db, pendingOnly: false, limit: 10) }
            #expect(after.first { $0.id == asked.id }?.cause == "cancelled" && after.first { $0.id == asked.id }?.resolvedAt == 9_000)
            #expect(try store.read { db in try UsageQueries.approvals(db, pendingOnly: true, limit: 10) }.isEmpty)
        }
    }

    @Test func notesAreStoredWithTheirOwnRoleAndReadBackAsNotes() async throws {
        try await withJournal { journal, store in
            let note = try await withCheckedThrowingContinuation { continuation in
                journal.note(userID: "u", conversationID: "cv_1", content: "Claude Code wants to run Bash", now: 5, queue: []) {
                    continuation.resume(with: $0)
                }
            }
            #expect(note.isNote && note.role == .assistant && note.seq > 0)
            let read = try store.read { db in try EventQueries.fetch(db, id: note.id) }
            #expect(read?.isNote == true && read?.role == .assistant && read?.content == "Claude Code wants to run Bash")
        }
    }
}
