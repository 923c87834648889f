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
