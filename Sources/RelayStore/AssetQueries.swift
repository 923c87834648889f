import GRDB

/// An uploaded file: bytes under the data directory, metadata here.
public struct AssetRecord: Sendable, Equatable {
    public var id: String
    public var userID: String
    public var mimeType: String
    public var size: Int64
    public var path: String
    public var createdAt: Int64

    public init(id: String, userID: String, mimeType: String, size: Int64, path: String, createdAt: Int64) {
        self.id = id
        self.userID = userID
        self.mimeType = mimeType
        self.size = size
        self.path = path
        self.createdAt = createdAt
    }
}

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
