import Foundation
import RelayCore

extension ClaudeInput {
    /// The most bytes one attachment may have to reach Claude Code (the Messages API's own
    /// limits are lower for images; it answers with an error Claude Code reports).
    static let maxAttachmentBytes = 20 << 20
    static let imageTypes: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/webp"]

    /// The Messages API content blocks for a turn's attachments: images as `image` blocks, PDFs
    /// as `document` blocks, text files as text; anything else (or too large, or gone) as a line
    /// that says what was attached and not passed on, so Claude is not silently missing it.
    static func blocks(for attachments: [TurnAttachment]) -> [JSONValue] {
        attachments.map { attachment in
            let name = attachment.fileName.map { String($0.prefix(128)) } ?? "attachment"
            guard let data = attachment.base64Bytes(limit: maxAttachmentBytes) else {
                return text("[\(name) (\(attachment.mimeType)) was attached but could not be read or is larger than 20 MiB]")
            }
            switch attachment.mimeType {
            case let mime where imageTypes.contains(mime): return source("image", mime, data)
            case "application/pdf": return source("document", "application/pdf", data)
            case let mime where mime.hasPrefix("text/"):
                let body = Data(base64Encoded: data).flatMap { String(data: $0, encoding: .utf8) }
                return text("Attached file \(name):\n\(body ?? "(not UTF-8 text)")")
            default:
                return text("[\(name) (\(attachment.mimeType.prefix(64))) was attached; Claude Code takes images, PDFs and text files only]")
            }
        }
    }

    private static func source(_ type: String, _ mime: String, _ data: String) -> JSONValue {
        .object([
            "type": .string(type),
            "source": .object(["type": .string("base64"), "media_type": .string(mime), "data": .string(data)]),
        ])
    }

    private static func text(_ value: String) -> JSONValue { .object(["type": .string("text"), "text": .string(value)]) }
}
