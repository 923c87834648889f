import Foundation
import RelayCore
import RelayStore
import Testing

/// `StoreStats.walPages`: what the writer's commits append to the write-ahead log (issue 26
/// measures the write path in pages per message).
@Suite struct StoreWALPagesTests {
    /// Appends `count` events, one transaction each, and waits for them.
    static func append(_ store: Store, _ count: Int, tag: String) async {
        for index in 0..<count {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                store.perform({ db in
                    _ = try EventQueries.append(
                        db,
                        userID: "u",
                        conversationID: "main",
                        role: .user,
                        content: "\(tag) \(index)",
                        deviceID: nil,
                        attachmentsJSON: nil,
                        at: 1
                    )
                }) { _ in done.resume() }
            }
        }
    }

    @Test func everyCommitCountsThePagesItAppended() async throws {
        let directory = NSTemporaryDirectory() + "clawrelay-wal-pages-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(dataDirectory: directory, executor: QueueLoop())
        #expect(store.stats.walPages == 0)
        await Self.append(store, 1, tag: "first")
        let one = store.stats.walPages
        #expect(one >= 1, "a commit writes at least the page it changed")
        await Self.append(store, 10, tag: "more")
        let eleven = store.stats.walPages
        #expect(eleven >= one + 10, "each of ten commits writes at least one page: \(one) → \(eleven)")
        #expect(store.stats.batches == 11)
        store.close()
    }
}
