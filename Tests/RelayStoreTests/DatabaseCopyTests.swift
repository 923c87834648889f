import Foundation
import GRDB
import RelayCore
import Synchronization
import Testing

@testable import RelayStore

/// `clawrelay backup`'s database copy: one snapshot however many steps it takes, while another
/// connection keeps committing.
@Suite struct DatabaseCopyTests {
    func append(_ store: Store, _ count: Int, from first: Int) throws {
        try store.write { db in
            for index in first..<(first + count) {
                _ = try EventQueries.append(
                    db,
                    userID: "u",
                    conversationID: "main",
                    role: .user,
                    content: String(repeating: "x", count: 2_000) + "\(index)",
                    deviceID: "d",
                    attachmentsJSON: nil,
                    at: Int64(index)
                )
            }
        }
    }

    @Test func theCopyIsOneSnapshotWhileAWriterCommits() throws {
        let temp = try TemporaryStore()
        try append(temp.store, 2_000, from: 0)
        let stop = StopFlag()
        let (store, stopped) = (temp.store, DispatchSemaphore(value: 0))
        let writer = Thread {
            var next = 2_000
            while !stop.value.load(ordering: .relaxed) {
                try? append(store, 10, from: next)
                next += 10
            }
            stopped.signal()
        }
        writer.start()
        let copy = temp.directory + "/copy.sqlite"
        var steps = 0
        try DatabaseCopy.copy(from: temp.store.path, to: copy, pagesPerStep: 16) { _, _ in steps += 1 }
        stop.value.store(true, ordering: .relaxed)
        stopped.wait()
        #expect(steps > 10, "many steps, commits between them")
        #expect(!FileManager.default.fileExists(atPath: copy + "-wal"), "no log beside the copy")
        let copied = try DatabaseQueue(path: copy)
        let (count, last) = try copied.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM events") ?? 0, try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM events") ?? 0)
        }
        #expect(count >= 2_000 && count % 10 == 0, "whole transactions only: \(count)")
        #expect(last == Int64(count), "no gap: the rows of one moment")
        let mode = try FileManager.default.attributesOfItem(atPath: copy)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func aFileThatIsNoDatabaseFailsWithItsName() throws {
        let temp = try TemporaryStore()
        let broken = temp.directory + "/broken.sqlite"
        try Data(repeating: 7, count: 8_192).write(to: URL(fileURLWithPath: broken))
        #expect(throws: StoreError.self) { try DatabaseCopy.copy(from: broken, to: temp.directory + "/out.sqlite") { _, _ in } }
    }
}

final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
}
