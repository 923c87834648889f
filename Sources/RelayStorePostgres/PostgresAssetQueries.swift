import Logging
import PostgresNIO
import RelayCore

/// Uploaded files' metadata (`assets`); their bytes live elsewhere.
enum PostgresAssetQueries {
    /// Stores a new asset; an id already stored is refused.
    static func insert(_ connection: PostgresConnection, _ asset: AssetRecord, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO assets (id, user_id, mime_type, size, path, created_ms)
            VALUES (\(asset.id), \(asset.userID), \(asset.mimeType), \(asset.size), \(asset.path), \(asset.createdAt))
            """,
            logger: logger
        )
    }

    static func asset(_ connection: PostgresConnection, id: String, logger: Logger) async throws -> AssetRecord? {
        let rows = try await connection.query("SELECT user_id, mime_type, size, path, created_ms FROM assets WHERE id = \(id)", logger: logger)
        for try await (user, mime, size, path, created) in rows.decode((String, String, Int64, String, Int64).self) {
            return AssetRecord(id: id, userID: user, mimeType: mime, size: size, path: path, createdAt: created)
        }
        return nil
    }
}
