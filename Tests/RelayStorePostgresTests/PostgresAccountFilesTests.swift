import Foundation
import RelayCore
import Testing

@testable import RelayStorePostgres

/// An upstream account's credential files travel with its lease (migration 13): only the live
/// holder stores them, and the node that takes the account writes the stored ones into its own
/// accounts folder before it opens the link.
@Suite(.timeLimit(.minutes(1))) struct PostgresAccountFilesTests {
    @Test func onlyTheAccountsLiveHolderStoresItsFiles() async throws {
        let database = try await TestDatabase()
        try await withNodes(database, "n1", "n2") { nodes in
            let (one, two) = (nodes[0], nodes[1])
            _ = try await one.holdAccounts(["claw"], take: true)
            let first = ["claw.clawline.json": Data("first".utf8)]
            #expect(try await one.storeAccountFiles("claw", present: ["claw.clawline.json"], changed: first, now: 1))
            #expect(try await two.storeAccountFiles("claw", present: [], changed: ["claw.key": Data("other".utf8)], now: 2) == false)
            #expect(try await one.accountFiles("claw") == first, "a node that does not hold the account changed nothing")

            // n1's lease lapses: it still names the account, but a dead incarnation stores nothing.
            try await database.withConnection { connection in
                try await connection.query("UPDATE nodes SET expires_at = now() - interval '1 second' WHERE node_id = 'n1'", logger: database.logger)
            }
            #expect(try await one.storeAccountFiles("claw", present: [], changed: ["claw.key": Data("late".utf8)], now: 3) == false)
            #expect(try await one.accountFiles("claw") == first)

            #expect(try await two.holdAccounts(["claw"], take: true).map(\.holder) == [two.identity])
            let second = ["claw.key": Data("second".utf8)]
            #expect(try await two.storeAccountFiles("claw", present: ["claw.key"], changed: second, now: 4))
            #expect(try await two.accountFiles("claw") == second, "a file the holder no longer has is dropped")
            #expect(try await database.integers("SELECT count(*) FROM account_files WHERE node_id = 'n2' AND sha256 = sha256(bytes)") == [1])
        }
    }

    /// The first holder's files become the cluster's copy, and only what changes is stored again;
    /// the node that takes the account over gets that copy in place of its own files (0600 in a
    /// 0700 folder, no stray temporary file, another account's file left alone).
    @Test func aTakingNodeWritesTheStoredFilesAndUnchangedFilesAreNotStoredAgain() async throws {
        let database = try await TestDatabase()
        let root = NSTemporaryDirectory() + "account-files-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (first, second) = (root + "/one/accounts", root + "/two/accounts")
        try FileManager.default.createDirectory(atPath: first, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/two", withIntermediateDirectories: true)
        try await withNodes(database, "n1", "n2") { nodes in
            let holder = AccountFileSync(directory: first, node: nodes[0], logger: database.logger)
            try write("{\"deviceId\":\"d1\"}", first, "claw.clawline.json")
            try write("key-1", first, "claw.key")
            try write("not this account's", first, "clawx.key")
            _ = try await nodes[0].holdAccounts(["claw"], take: true)
            #expect(try await holder.sync("claw") == .uploaded(["claw.clawline.json", "claw.key"]), "the first copy")
            #expect(try await holder.sync("claw") == .unchanged)
            try write("{\"deviceId\":\"d1\",\"token\":\"t1\"}", first, "claw.clawline.json")
            #expect(try await holder.sync("claw") == .uploaded(["claw.clawline.json"]))
            #expect(try await holder.sync("claw") == .unchanged)
            // The link reports itself connected (it paired): stored at once, no heartbeat needed.
            let paired = "{\"deviceId\":\"d1\",\"token\":\"t1\",\"userId\":\"u1\"}"
            try write(paired, first, "claw.clawline.json")
            await holder.linkConnected("claw").value
            #expect(try await nodes[0].accountFiles("claw")["claw.clawline.json"] == Data(paired.utf8))
            #expect(try await holder.sync("claw") == .unchanged)
            try write(String(repeating: "x", count: AccountFileSync.maxFileBytes + 1), first, "claw.token")
            #expect(try await holder.sync("claw") == .unchanged, "a file over 1 MiB is not shared")

            try write("{\"deviceId\":\"d2\"}", second, "claw.clawline.json")
            try write("stale", second, "claw.token")
            try await database.withConnection { connection in
                try await connection.query("UPDATE nodes SET expires_at = now() - interval '1 second' WHERE node_id = 'n1'", logger: database.logger)
            }
            _ = try await nodes[1].holdAccounts(["claw"], take: true)
            try await database.withConnection { connection in
                try await connection.query(
                    """
                    INSERT INTO account_files SELECT account, '../escape.key', bytes, sha256, updated_ms, node_id, incarnation
                    FROM account_files WHERE name = 'claw.key'
                    """,
                    logger: database.logger
                )
            }
            let taker = AccountFileSync(directory: second, node: nodes[1], logger: database.logger)
            #expect(try await taker.sync("claw") == .downloaded(["claw.clawline.json", "claw.key"]))
            #expect(!FileManager.default.fileExists(atPath: root + "/two/escape.key"), "a stored name is never taken as a path")
            for name in ["claw.clawline.json", "claw.key"] {
                #expect(FileManager.default.contents(atPath: "\(second)/\(name)") == FileManager.default.contents(atPath: "\(first)/\(name)"))
                #expect(try mode(second + "/" + name) == 0o600)
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: second).sorted() == ["claw.clawline.json", "claw.key"])
            #expect(try await taker.sync("claw") == .unchanged, "what it took is not stored back")
            try write("{\"deviceId\":\"d1\",\"token\":\"t2\"}", first, "claw.clawline.json")
            #expect(try await holder.sync("claw") == .refused, "the old holder is fenced off")
            #expect(try await nodes[1].accountFiles("claw")["claw.clawline.json"] == Data(paired.utf8))
        }
    }

    private func write(_ text: String, _ directory: String, _ name: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Data(text.utf8).write(to: URL(fileURLWithPath: "\(directory)/\(name)"))
    }

    private func mode(_ path: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int ?? 0
    }
}
