import Crypto
import Foundation

/// Replaces secrets in frames with `sha256:<first 8 hex>` before they reach the audit table.
///
/// JSON bodies: every string under a key that names a secret (token, password, signature, secret,
/// authorization, in any case and as part of a longer key such as `deviceToken`), and any string
/// shaped like a JWT. Other text: `authorization:` header values and `Bearer` credentials.
public enum Redactor {
    static let secretWords = ["token", "password", "signature", "secret", "authorization"]

    public static func fingerprint(_ secret: String) -> String {
        "sha256:" + Digest.sha256Hex(secret).prefix(8)
    }

    /// Redacts a frame body; JSON stays JSON (keys sorted), anything else is treated as text.
    /// A body that mentions no secret word and no JWT header is kept as it is (the common case).
    public static func redact(_ body: [UInt8]) -> String {
        guard mightHoldSecret(body) else { return String(decoding: body, as: UTF8.self) }
        if let first = body.first(where: { $0 != 0x20 && $0 != 0x0a && $0 != 0x0d && $0 != 0x09 }),
            first == UInt8(ascii: "{") || first == UInt8(ascii: "["), let json = JSONValue.parse(body)
        {
            return redact(json).encoded()
        }
        return redactText(String(decoding: body, as: UTF8.self))
    }

    public static func redact(_ value: JSONValue, underSecretKey: Bool = false) -> JSONValue {
        switch value {
        case .string(let text):
            return underSecretKey || looksLikeJWT(text) ? .string(fingerprint(text)) : .string(redactText(text))
        case .array(let items):
            return .array(items.map { redact($0, underSecretKey: underSecretKey) })
        case .object(let members):
            var out: [String: JSONValue] = [:]
            for (key, member) in members { out[key] = redact(member, underSecretKey: underSecretKey || isSecretKey(key)) }
            return .object(out)
        default:
            return value
        }
    }

    static let needles: [[UInt8]] = (secretWords + ["bearer", "eyj"]).map { Array($0.utf8) }

    /// For each first byte (folded with `| 0x20`), a bit per second byte (folded, low 5 bits) that
    /// some needle has there: a two-byte filter in front of the full comparison.
    static let bigramMasks: [UInt32] = {
        var masks = [UInt32](repeating: 0, count: 256)
        for needle in needles { masks[Int(needle[0])] |= 1 << UInt32(needle[1] & 31) }
        return masks
    }()

    /// A case-insensitive scan for any secret word or the start of a JWT.
    ///
    /// Same matches as comparing every needle at every offset (`byte | 0x20 == needle byte`), but
    /// a two-byte table lookup rejects almost every offset, so a body without secrets costs a few
    /// instructions per byte. Every frame, of every kind, goes through this scan.
    public static func mightHoldSecret(_ body: [UInt8]) -> Bool {
        body.withUnsafeBufferPointer { mightHoldSecret($0) }
    }

    /// ``mightHoldSecret(_:)`` over raw bytes.
    public static func mightHoldSecret(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = bytes.count
        guard count >= 3 else { return false }
        return bigramMasks.withUnsafeBufferPointer { masks in
            for index in 0..<(count - 1) {
                let mask = masks[Int(bytes[index] | 0x20)]
                guard mask != 0, mask & (1 << UInt32((bytes[index + 1] | 0x20) & 31)) != 0 else { continue }
                if matchesNeedle(bytes, at: index) { return true }
            }
            return false
        }
    }

    private static func matchesNeedle(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        let first = bytes[index] | 0x20
        for needle in needles where needle[0] == first && index + needle.count <= bytes.count {
            var matched = true
            for offset in 1..<needle.count where bytes[index + offset] | 0x20 != needle[offset] {
                matched = false
                break
            }
            if matched { return true }
        }
        return false
    }

    public static func isSecretKey(_ key: String) -> Bool {
        let lower = key.lowercased()
        return secretWords.contains { lower.contains($0) }
    }

    /// Redacts header-style secrets inside free text.
    public static func redactText(_ text: String) -> String {
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = String(line)
            if let colon = line.firstIndex(of: ":"), isSecretKey(String(line[..<colon])), line[..<colon].count < 40 {
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                line = String(line[...colon]) + " " + fingerprint(value)
            } else if let range = line.range(of: "Bearer ", options: .caseInsensitive) {
                let secret = line[range.upperBound...].prefix { !$0.isWhitespace && $0 != "\"" }
                if !secret.isEmpty { line.replaceSubrange(range.upperBound..<secret.endIndex, with: fingerprint(String(secret))) }
            }
            lines.append(line)
        }
        let joined = lines.joined(separator: "\n")
        return looksLikeJWT(joined) ? fingerprint(joined) : joined
    }

    /// Three base64url segments, the first decoding to a JSON header: a JWT.
    public static func looksLikeJWT(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }), parts[0].hasPrefix("eyJ") else { return false }
        return parts.allSatisfy { $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" } }
    }
}
