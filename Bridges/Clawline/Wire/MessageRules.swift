import Foundation
import RelayKit

/// The size and shape rules for a chat message's content and attachments.
public enum MessageRules {
    public static let maxContentBytes = 65_536
    public static let maxInlineBytes = 256 * 1024
    public static let maxMessageBytes = 320 * 1024
    public static let maxAttachments = 4
    public static let inlineMimeTypes = InlineImage.mimeTypes

    public struct Validated: Equatable, Sendable {
        /// The attachments to store and echo, or nil when there are none.
        public var json: String?
        /// Asset ids that must exist and belong to the user.
        public var assetIDs: [String]
    }

    /// An attachment as the relay stores it (and echoes it, with an `id`).
    private struct Stored: Encodable {
        var type: String
        var mimeType: String?
        var data: String?
        var assetId: String?
    }

    /// Base64 that ignores whitespace and padding, as the test list requires.
    public static func decodeBase64(_ text: String) -> [UInt8]? {
        var cleaned = text.filter { !$0.isWhitespace && $0 != "=" }
        guard cleaned.utf8.count % 4 != 1 else { return nil }
        while cleaned.utf8.count % 4 != 0 { cleaned += "=" }
        return Data(base64Encoded: cleaned).map { Array($0) }
    }

    /// A hash over the attachments that is equal for equal decoded content, order-sensitive.
    public static func attachmentsHash(_ attachments: [JSONValue]) -> String {
        let canonical = attachments.map { item -> String in
            switch item["type"]?.stringValue {
            case "image":
                let data = item["data"]?.stringValue ?? ""
                let digest = decodeBase64(data).map { Digest.sha256Hex($0) } ?? "raw:" + Digest.sha256Hex(data.utf8)
                return "image|\(item["mimeType"]?.stringValue ?? "")|\(digest)"
            case "asset": return "asset|\(item["assetId"]?.stringValue ?? "")"
            default: return "other|\(item.encoded())"
            }
        }
        return Digest.sha256Hex(canonical.joined(separator: "\n").utf8)
    }

    public static func validate(clientID: String, content: String, attachments: [JSONValue]) -> Result<Validated, ClawlineError> {
        func tooLarge(_ message: String) -> Result<Validated, ClawlineError> { .failure(.tooLarge(message, messageId: clientID)) }
        func invalid(_ message: String) -> Result<Validated, ClawlineError> { .failure(.invalid(message, messageId: clientID)) }
        let contentBytes = content.utf8.count
        if contentBytes > maxContentBytes { return tooLarge("content is larger than 64 KB") }
        if attachments.count > maxAttachments { return tooLarge("at most \(maxAttachments) attachments") }
        var inlineTotal = 0
        var stored: [Stored] = []
        var assetIDs: [String] = []
        for item in attachments {
            guard case .object(let fields) = item else { return invalid("each attachment must be an object") }
            switch fields["type"]?.stringValue {
            case "image":
                guard let mime = fields["mimeType"]?.stringValue, !mime.isEmpty else { return invalid("image attachment needs mimeType") }
                guard let data = fields["data"]?.stringValue, !data.isEmpty else { return invalid("image attachment needs data") }
                guard inlineMimeTypes.contains(mime) else { return invalid("unsupported image mimeType \(mime.prefix(64))") }
                guard let bytes = decodeBase64(data) else { return invalid("image data is not valid base64") }
                if bytes.count > maxInlineBytes { return tooLarge("inline attachment is larger than 256 KB") }
                inlineTotal += bytes.count
                // Stored as strict base64 (padded, no whitespace): the app decodes `data` as
                // Foundation `Data`, which refuses anything looser and would drop the message.
                stored.append(Stored(type: "image", mimeType: mime, data: Data(bytes).base64EncodedString()))
            case "asset":
                guard let assetID = fields["assetId"]?.stringValue, !assetID.isEmpty else { return invalid("asset attachment needs assetId") }
                assetIDs.append(assetID)
                stored.append(Stored(type: "asset", assetId: assetID))
            case "url":
                // Not Clawline v1, and the app has no way to show one: refused rather than stored
                // as something every app device would drop.
                return invalid("url attachments are not supported; upload the file and send it as an asset")
            case nil:
                return invalid("attachment needs a type")
            case let other?:
                return invalid("unknown attachment type \(other.prefix(32))")
            }
        }
        if inlineTotal > maxInlineBytes { return tooLarge("inline attachments total more than 256 KB") }
        if inlineTotal + contentBytes > maxMessageBytes { return tooLarge("message is larger than 320 KB") }
        return .success(Validated(json: stored.isEmpty ? nil : FrameEncoder.encode(stored, sorted: true), assetIDs: assetIDs))
    }
}
