import Foundation
import RelayCore
import RelayStorePostgres
import Testing

@Suite("Uploaded files shared through PostgreSQL")
struct PostgresSharedAssetTests {
    @Test func anUploadStoredThroughOneNodeIsWrittenIntoAnotherNodesFolder() async throws {
        let first = try await JournalFixture()
        let secondWriter = first.database.writer(for: NodeIncarnation(node: "n2"))
        let second = PostgresJournal(writer: secondWriter, logger: first.database.logger) { _, _ in }
        let root = NSTemporaryDirectory() + "shared-assets-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (one, two) = (root + "/one", root + "/two")
        try FileManager.default.createDirectory(atPath: one, withIntermediateDirectories: true)
        first.journal.assetsDirectory = one
        second.assetsDirectory = two
        let bytes = Data("picture bytes".utf8)
        let uploaded = one + "/a1"
        #expect(FileManager.default.createFile(atPath: uploaded, contents: bytes))
        let record = AssetRecord(id: "a1", userID: "u", mimeType: "image/png", size: Int64(bytes.count), path: uploaded, createdAt: 1)
        try await awaiting { first.journal.saveAsset(record, completion: $0) }

        let read = try #require(try await awaiting { second.asset(id: "a1", completion: $0) })
        #expect(read.path == two + "/a1")
        #expect(FileManager.default.contents(atPath: read.path) == bytes)
        let attributes = try FileManager.default.attributesOfItem(atPath: read.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let unknown = try await awaiting { second.asset(id: "nope", completion: $0) }
        #expect(unknown == nil)
        await secondWriter.stop()
        await first.stop()
    }
}
