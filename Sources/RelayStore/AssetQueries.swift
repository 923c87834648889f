import GRDB
import RelayCore

public enum AssetQueries {
    public static func insert(_ db: Database, _ asset: AssetRecord) throws {
        try db.run(
            "INSERT INTO assets (id, user_id, mime_type, size, path, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            [asset.id, asset.userID, asset.mimeType, asset.size, asset.path, asset.createdAt]
        )
    }

    public static func fetch(_ db: Database, id: String) throws -> AssetRecord? {
        guard let row = try db.row("SELECT * FROM assets WHERE id = ?", [id]) else { return nil }
        return AssetRecord(
            id: row["id"],
            userID: row["user_id"],
            mimeType: row["mime_type"],
            size: row["size"],
            path: row["path"],
            createdAt: row["created_at"]
        )
    }
}
