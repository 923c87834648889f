import Foundation
import GRDB
import RelayCore
import Synchronization
import Testing

@testable import RelayStore

@Suite struct CheckpointerTests {
    @Test func theRelaysWriterNeverCheckpointsInACommitButCopiesTheLogBetweenBatches() async throws {
        let directory = NSTemporaryDirectory() + "clawrelay-checkpoint-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(dataDirectory: directory, executor: QueueLoop())
        let pragmas: (Int, Int, Int) = try await withCheckedThrowingContinuation { done in
            store.perform({ db -> (Int, Int, Int) in
                for index in 0..<500 {
                    _ = try EventQueries.append(
                        db,
                        userID: "u",
                        conversationID: "main",
                        role: .user,
                        content: "message \(index)",
                        deviceID: nil,
                        attachmentsJSON: nil,
                        at: 1
                    )
                }
                return (
                    try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? -1, try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? 0,
                    try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1
                )
            }) { done.resume(with: $0) }
        }
        #expect(pragmas.0 == 0, "no checkpoint inside the writer's commits")
        #expect(pragmas.1 == -65_536, "the writer keeps a 64 MiB page cache")
        #expect(pragmas.2 == 2, "and still syncs every commit (synchronous = FULL)")
        store.close()
        #expect(store.checkpoints >= 1, "closing runs a last checkpoint")

        // Everything the log held is in the database file now: a fresh connection that reads only
        // the file (immutable, so the log is ignored) sees every event.
        let file = try DatabaseQueue(
            path: "file:\(directory)/relay.sqlite?immutable=1",
            configuration: {
                var configuration = Configuration()
                configuration.readonly = true
                return configuration
            }()
        )
        let count = try await file.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM events") }
        #expect(count == 500)

        let cli = try Store(dataDirectory: directory, executor: nil)
        #expect(try cli.write { try Int.fetchOne($0, sql: "PRAGMA wal_autocheckpoint") } == 1_000, "the CLI keeps SQLite's own checkpoints")
        #expect(cli.checkpoints == 0)
    }

    @Test func aCheckpointBetweenBatchesLeavesTheWriterSyncingAndWaitsForNoOtherWriter() throws {
        let directory = NSTemporaryDirectory() + "clawrelay-checkpoint-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/relay.sqlite"
        let pool = try DatabaseOpener.open(path: path, migrator: Migrations.relay(), fullSync: true, ownCheckpoints: true)
        let checkpointer = try Checkpointer(path: path, fullSync: true)
        let stats = StoreStats()
        try pool.write { db in
            for index in 0..<50 {
                _ = try EventQueries.append(
                    db,
                    userID: "u",
                    conversationID: "main",
                    role: .user,
                    content: "\(index)",
                    deviceID: nil,
                    attachmentsJSON: nil,
                    at: 1
                )
            }
        }
        checkpointer.afterBatch(pool, stats: stats, force: true)
        #expect(checkpointer.checkpoints == 1)
        #expect(stats.logPagesMaxCount > 0 && stats.checkpointsSkippedCount == 0, "the checkpoint saw the log's pages")
        #expect(try pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == 2, "the writer's commits sync again")
        let state = try pool.writeWithoutTransaction { db -> [Int] in
            guard let row = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)") else { return [] }
            return [row[0], row[1], row[2]]
        }
        #expect(state.count == 3 && state[0] == 0 && state[1] == state[2], "the log was copied whole: \(state)")

        // Another process in the middle of a write: the checkpoint is skipped, not waited for.
        let other = try DatabaseQueue(path: path)
        try other.inDatabase { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            defer { try? db.execute(sql: "ROLLBACK") }
            checkpointer.afterBatch(pool, stats: stats, force: true)
        }
        #expect(checkpointer.checkpoints == 1)
        #expect(stats.checkpointsSkippedCount == 1, "counted as skipped")
        checkpointer.afterBatch(pool, stats: stats, force: true)
        #expect(checkpointer.checkpoints == 2)
        try pool.close()
    }
}
