import Foundation
import PostgresNIO

/// An upstream account's credential files in `account_files` (migration 13), on the node's
/// control connection: written by the account's live holder only, read by the node taking it.
extension PostgresNode {
    /// Stores `changed` (file name → bytes) as the account's files and drops its stored files not
    /// named in `present`; false (nothing written) when this incarnation is not the account's
    /// live holder.
    public func storeAccountFiles(_ account: String, present: [String], changed: [String: Data], now: Int64) async throws -> Bool {
        let names = changed.keys.sorted()
        let bytes = names.map { ByteBuffer(bytes: Array(changed[$0] ?? Data())) }
        let rows = try await control().query(
            """
            SELECT relay_store_account_files(\(identity.node), \(identity.incarnation), \(account), \(present), \(names), \(bytes),
              \(now))
            """,
            logger: logger
        )
        for try await stored in rows.decode(Bool.self) { return stored }
        return false
    }

    /// The account's stored files (file name → bytes); empty when no holder stored any yet.
    public func accountFiles(_ account: String) async throws -> [String: Data] {
        let rows = try await control().query("SELECT name, bytes FROM account_files WHERE account = \(account)", logger: logger)
        var files: [String: Data] = [:]
        for try await (name, bytes) in rows.decode((String, Data).self) { files[name] = bytes }
        return files
    }
}
