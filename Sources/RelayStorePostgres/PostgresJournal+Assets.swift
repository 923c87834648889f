import Foundation
import Logging
import PostgresNIO
import RelayCore

/// Uploaded files shared by every node: an upload's bytes go to PostgreSQL with its record, and a
/// node asked for an asset it does not hold writes it into its own `assetsDirectory` first, so the
/// bridges and backends keep reading a local file (`AssetRecord.path`).
extension PostgresJournal: AssetJournal {
    /// Stores the record and the bytes of the file it names (read off the loop) in one transaction.
    public func saveAsset(_ asset: AssetRecord, completion: @escaping (Result<Void, any Error>) -> Void) {
        perform(
            "store an asset",
            { connection, logger in
                let bytes = try await AssetFiles.read(asset.path)
                try await PostgresAssetQueries.insert(connection, asset, bytes: bytes, logger: logger)
            },
            completion: completion
        )
    }

    /// The asset with the path of this node's copy: the file under `assetsDirectory` when it is
    /// there or PostgreSQL holds its bytes (written there first), else the path its record names.
    public func asset(id: String, completion: @escaping (Result<AssetRecord?, any Error>) -> Void) {
        let directory = assetsDirectory
        perform(
            "read an asset",
            { connection, logger in
                guard let (record, shared) = try await PostgresAssetQueries.stored(connection, id: id, logger: logger) else { return nil }
                guard let directory, shared, let local = Self.localPath(of: id, in: directory) else { return record }
                var found = record
                found.path = local
                if FileManager.default.fileExists(atPath: local) { return found }
                guard let bytes = try await PostgresAssetQueries.bytes(connection, id: id, logger: logger) else { return record }
                try await AssetFiles.write(bytes, to: local)
                logger.debug("postgres: wrote a shared upload into this node's data directory", metadata: ["asset": "\(id)"])
                return found
            },
            completion: completion
        )
    }

    /// Where this node keeps asset `id`; nil for an id that could leave the folder (ids are the
    /// relay's own, but the row is read from a shared database).
    static func localPath(of id: String, in directory: String) -> String? {
        guard !id.isEmpty, !id.hasPrefix("."), !id.contains("/"), !id.contains("\0") else { return nil }
        return (directory as NSString).appendingPathComponent(id)
    }
}
