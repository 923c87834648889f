import Foundation
import RelayKit

/// `chat.send`'s `attachments: [{type: "image", mimeType, fileName?, content: <base64>}]` (the
/// OpenClaw apps' composer; `data` is read too), checked against the limits `hello-ok.policy.attachments`
/// advertises and turned into the relay's neutral stored form (`{type: "image", mimeType, data,
/// fileName?}`), which every protocol's devices and every backend read.
public enum ChatAttachments {
    public static let maxCount = 8
    public static let maxImageBytes = 4 << 20
    public static let maxBytes = 8 << 20
    /// What Clawline devices of the same user can show of the stored message.
    public static let imageTypes = InlineImage.mimeTypes

    /// `hello-ok.policy.attachments`.
    public struct Policy: Codable, Equatable, Sendable {
        public var maxBytes: Int64 = Int64(ChatAttachments.maxBytes)
        public var maxImageBytes: Int64 = Int64(ChatAttachments.maxImageBytes)

        public init() {}
    }

    public struct Checked: Equatable, Sendable {
        /// The stored form, nil when there are none.
        public var json: String?
        /// Equal for equal attachments (what tells a retry from a different message).
        public var hash: String
    }

    private struct Stored: Encodable {
        var type = "image"
        var mimeType: String
        var data: String
        var fileName: String?
    }

    public static func check(_ attachments: [JSONValue]?) -> Result<Checked, GatewayError> {
        let items = attachments ?? []
        guard !items.isEmpty else { return .success(Checked(json: nil, hash: "")) }
        guard items.count <= maxCount else { return .failure(.invalid("at most \(maxCount) attachments")) }
        var stored: [Stored] = []
        var total = 0
        for (index, item) in items.enumerated() {
            let number = index + 1
            guard case .object(let fields) = item else { return .failure(.invalid("attachment \(number) must be an object")) }
            guard (fields["type"]?.stringValue ?? "image") == "image" else {
                return .failure(.invalid("attachment \(number): only images can be attached (type \"image\")"))
            }
            guard let mime = fields["mimeType"]?.stringValue?.lowercased(), imageTypes.contains(mime) else {
                return .failure(.invalid("attachment \(number): mimeType must be one of \(imageTypes.sorted().joined(separator: ", "))"))
            }
            guard let encoded = (fields["content"] ?? fields["data"])?.stringValue,
                let bytes = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters),
                !bytes.isEmpty
            else { return .failure(.invalid("attachment \(number): content must be non-empty base64")) }
            guard bytes.count <= maxImageBytes else { return .failure(.invalid("attachment \(number) is larger than \(maxImageBytes >> 20) MiB")) }
            total += bytes.count
            guard total <= maxBytes else { return .failure(.invalid("attachments are larger than \(maxBytes >> 20) MiB in all")) }
            let name = fields["fileName"]?.stringValue.map { String($0.prefix(255)) }
            stored.append(Stored(mimeType: mime, data: bytes.base64EncodedString(), fileName: name))
        }
        let json = GatewayJSON.encode(stored)
        return .success(Checked(json: json, hash: Digest.sha256Hex(json)))
    }
}
