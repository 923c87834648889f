import Foundation
import Logging
import PostgresNIO
import RelayCore

/// Uploaded files: their metadata (`assets`) and, shared by every node, their bytes (`asset_bytes`).
enum PostgresAssetQueries {
    /// Stores a new asset, with its bytes when given, in one transaction; an id already stored is refused.
    static func insert(_ connection: PostgresConnection, _ asset: AssetRecord, bytes: Data?, logger: Logger) async throws {
        try await connection.transaction(logger) {
            try await connection.query(
                """
                INSERT INTO assets (id, user_id, mime_type, size, path, created_ms)
                VALUES (\(asset.id), \(asset.userID), \(asset.mimeType), \(asset.size), \(asset.path), \(asset.createdAt))
                """,
                logger: logger
            )
            if let bytes {
                try await connection.query("INSERT INTO asset_bytes (asset_id, bytes) VALUES (\(asset.id), \(bytes))", logger: logger)
            }
        }
    }

    /// The asset's record and whether PostgreSQL holds its bytes (an asset copied from SQLite, or
    /// stored before migration 10, has only the file its record names).
    static func stored(_ connection: PostgresConnection, id: String, logger: Logger) async throws -> (record: AssetRecord, shared: Bool)? {
        let rows = try await connection.query(
            """
            SELECT user_id, mime_type, size, path, created_ms, EXISTS (SELECT 1 FROM asset_bytes b WHERE b.asset_id = a.id)
            FROM assets a WHERE id = \(id)
            """,
            logger: logger
        )
        for try await (user, mime, size, path, created, shared) in rows.decode((String, String, Int64, String, Int64, Bool).self) {
            return (AssetRecord(id: id, userID: user, mimeType: mime, size: size, path: path, createdAt: created), shared)
        }
        return nil
    }

    /// The asset's bytes as stored in PostgreSQL, nil when it has none there.
    static func bytes(_ connection: PostgresConnection, id: String, logger: Logger) async throws -> Data? {
        let rows = try await connection.query("SELECT bytes FROM asset_bytes WHERE asset_id = \(id)", logger: logger)
        for try await bytes in rows.decode(Data.self) { return bytes }
        return nil
    }
}
