import Foundation

/// `POST /api/files/content`'s answer as the newest app decodes it (`FileContentService`):
/// `{success, content: {filename, content, mimeType, size, encoding}, warning?}`.
public struct FileContentAnswer: Encodable, Sendable, Equatable {
    public struct Content: Encodable, Sendable, Equatable {
        public var filename: String
        public var content: String
        public var mimeType: String
        public var size: Int
        public var encoding = "utf-8"

        public init(filename: String, content: String, mimeType: String, size: Int) {
            self.filename = filename
            self.content = content
            self.mimeType = mimeType
            self.size = size
        }
    }

    /// Several files have the name the user tapped: which ones (the newest was shown).
    public struct Warning: Encodable, Sendable, Equatable {
        public struct Duplicate: Encodable, Sendable, Equatable {
            public var relativePath: String
            public var size: Int
            public var lastModified: String

            public init(relativePath: String, size: Int, lastModified: Date) {
                self.relativePath = relativePath
                self.size = size
                self.lastModified = CompanionTimestamp.string(Int64(lastModified.timeIntervalSince1970 * 1000))
            }
        }

        public var type = "DUPLICATE_FILENAMES"
        public var message: String
        public var duplicates: [Duplicate]
        public var suggestion: String

        public static func duplicates(of name: String, _ found: [Duplicate]) -> Warning {
            let shown = name.prefix(255)
            return Warning(
                message: "Found \(found.count) files named '\(shown)' in your project; the most recently modified is shown.",
                duplicates: Array(found.prefix(20)),
                suggestion: "Ask Claude to rename the '\(shown)' files to names that say what each one is."
            )
        }
    }

    public var success = true
    public var content: Content
    public var warning: Warning?

    public init(content: Content, warning: Warning? = nil) {
        self.content = content
        self.warning = warning
    }
}

/// A refused `POST /api/files/content`: `{success: false, message, error}` (the app shows
/// `message` for statuses it does not map itself).
public struct FileContentRefusal: Encodable, Sendable, Equatable {
    public var success = false
    public var message: String
    public var error: String

    public init(_ message: String, error: String) {
        self.message = message
        self.error = error
    }
}
