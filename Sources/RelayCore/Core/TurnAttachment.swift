import Foundation
import RelayKit

/// A file the user attached to the message a turn answers, as backends are handed it: an image
/// sent inline (its base64 as stored) or an uploaded asset (its file under the data directory).
public struct TurnAttachment: Sendable, Equatable {
    public var mimeType: String
    public var fileName: String?
    /// The bytes, base64 (standard alphabet, padded), for an inline attachment.
    public var base64: String?
    /// The file that holds the bytes, for an uploaded asset.
    public var path: String?

    public init(mimeType: String, fileName: String? = nil, base64: String? = nil, path: String? = nil) {
        self.mimeType = mimeType
        self.fileName = fileName
        self.base64 = base64
        self.path = path
    }

    /// The bytes as base64: the inline ones as they are, a file's read now (at most `limit`
    /// bytes; nil when it is missing or larger). Reads a file: not on the loop.
    public func base64Bytes(limit: Int) -> String? {
        if let base64 { return base64 }
        guard let path, let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: limit + 1), data.count <= limit else { return nil }
        return data.base64EncodedString()
    }

    /// The most bytes of an uploaded file an upstream account is handed (inline).
    public static let maxInlinedBytes = 32 << 20

    /// The same attachment with its bytes inline (a file read now; nil when it is missing or
    /// larger than `limit`). Not on the loop.
    public func inlined(limit: Int) -> TurnAttachment? {
        guard path != nil else { return self }
        guard let data = base64Bytes(limit: limit) else { return nil }
        return TurnAttachment(mimeType: mimeType, fileName: fileName, base64: data)
    }

    /// The bytes: decoded, or read from the file (at most `limit`). Not on the loop.
    public func bytes(limit: Int) -> Data? { base64Bytes(limit: limit).flatMap { Data(base64Encoded: $0) } }
}

extension TurnAttachment {
    /// One attachment of a stored message (the relay's neutral form), before its asset is looked up.
    enum Stored: Equatable {
        case ready(TurnAttachment)
        case asset(id: String, fileName: String?)
    }

    /// The attachments of a stored message's `attachmentsJSON`, in order; unknown kinds are left out.
    static func parse(_ json: String?) -> [Stored] {
        guard let json, case .array(let items)? = JSONValue.parse(json) else { return [] }
        return items.compactMap { item in
            let fileName = item["fileName"]?.stringValue
            switch item["type"]?.stringValue {
            case "image":
                guard let mime = item["mimeType"]?.stringValue, let data = item["data"]?.stringValue else { return nil }
                return .ready(TurnAttachment(mimeType: mime, fileName: fileName, base64: data))
            case "asset":
                return item["assetId"]?.stringValue.map { .asset(id: $0, fileName: fileName) }
            default:
                return nil
            }
        }
    }
}
