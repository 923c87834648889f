import Crypto
import Foundation
import RelayKit

/// OpenClaw device identity: Ed25519 keys, ids and the signed connect payload (v3, then v2).
public enum DeviceAuth {
    /// The DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw key follows it.
    static let spkiPrefix: [UInt8] = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]

    /// What the device signs, as the connect carries it.
    public struct SignedFields: Equatable, Sendable {
        public var deviceID: String
        public var clientID: String
        public var clientMode: String
        public var role: String
        public var scopes: [String]
        public var signedAtMillis: Int64
        public var token: String
        public var nonce: String
        public var platform: String
        public var deviceFamily: String

        public init(
            deviceID: String,
            clientID: String,
            clientMode: String,
            role: String,
            scopes: [String],
            signedAtMillis: Int64,
            token: String,
            nonce: String,
            platform: String,
            deviceFamily: String
        ) {
            self.deviceID = deviceID
            self.clientID = clientID
            self.clientMode = clientMode
            self.role = role
            self.scopes = scopes
            self.signedAtMillis = signedAtMillis
            self.token = token
            self.nonce = nonce
            self.platform = platform
            self.deviceFamily = deviceFamily
        }
    }

    public static func payloadV2(_ f: SignedFields) -> String {
        ["v2", f.deviceID, f.clientID, f.clientMode, f.role, f.scopes.joined(separator: ","), String(f.signedAtMillis), f.token, f.nonce]
            .joined(separator: "|")
    }

    public static func payloadV3(_ f: SignedFields) -> String {
        payloadV2(f).replacingOccurrences(of: "v2|", with: "v3|", options: .anchored) + "|" + normalize(f.platform) + "|"
            + normalize(f.deviceFamily)
    }

    /// Trimmed and ASCII-lowercased, as the gateway signs platform and device family.
    static func normalize(_ text: String) -> String {
        String(
            text.trimmingCharacters(in: .whitespacesAndNewlines).unicodeScalars.map { scalar in
                ("A"..."Z").contains(scalar) ? Character(Unicode.Scalar(scalar.value + 32)!) : Character(scalar)
            }
        )
    }

    /// The raw 32-byte key from base64url, standard base64 or PEM SPKI.
    public static func rawPublicKey(_ text: String) -> [UInt8]? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("-----BEGIN") {
            let body = trimmed.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
            guard let der = Data(base64Encoded: body).map(Array.init), der.count == 44, Array(der.prefix(12)) == spkiPrefix else { return nil }
            return Array(der.suffix(32))
        }
        guard let bytes = decodeBase64Either(trimmed) else { return nil }
        if bytes.count == 32 { return bytes }
        if bytes.count == 44, Array(bytes.prefix(12)) == spkiPrefix { return Array(bytes.suffix(32)) }
        return nil
    }

    static func decodeBase64Either(_ text: String) -> [UInt8]? {
        if let bytes = Base64URL.decode(text) { return bytes }
        var padded = text
        while padded.utf8.count % 4 != 0 { padded += "=" }
        return Data(base64Encoded: padded).map(Array.init)
    }

    /// Lowercase hex SHA-256 of the raw key.
    public static func deviceID(forRawKey key: [UInt8]) -> String {
        Digest.sha256Hex(key)
    }

    /// An Ed25519 signature over the UTF-8 payload, base64url without padding.
    public static func sign(_ payload: String, with key: Curve25519.Signing.PrivateKey) -> String {
        (try? key.signature(for: Array(payload.utf8))).map { Base64URL.encode(Array($0)) } ?? ""
    }

    /// Why a device signature was refused: the `details.code` real gateways send.
    public enum Failure: String, Error, Sendable {
        case badKey = "DEVICE_AUTH_PUBLIC_KEY_INVALID"
        case idMismatch = "DEVICE_AUTH_DEVICE_ID_MISMATCH"
        case stale = "DEVICE_AUTH_SIGNATURE_EXPIRED"
        case nonceMismatch = "DEVICE_AUTH_NONCE_MISMATCH"
        case badSignature = "DEVICE_AUTH_SIGNATURE_INVALID"

        /// What real gateways say for it.
        public var message: String {
            switch self {
            case .badKey: "device public key invalid"
            case .idMismatch: "device identity mismatch"
            case .stale: "device signature expired"
            case .nonceMismatch: "device nonce mismatch"
            case .badSignature: "device signature invalid"
            }
        }
    }

    /// Checks key, id, freshness (±2 min), nonce and the signature over v3 then v2; the raw key
    /// when all hold.
    public static func verify(
        _ fields: SignedFields,
        publicKey: String,
        signature: String,
        expectedNonce: String,
        nowMillis: Int64
    ) -> Result<[UInt8], Failure> {
        guard let raw = rawPublicKey(publicKey), let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw) else { return .failure(.badKey) }
        guard deviceID(forRawKey: raw) == fields.deviceID else { return .failure(.idMismatch) }
        guard abs(nowMillis - fields.signedAtMillis) <= 120_000 else { return .failure(.stale) }
        guard fields.nonce == expectedNonce else { return .failure(.nonceMismatch) }
        guard let signatureBytes = decodeBase64Either(signature) else { return .failure(.badSignature) }
        for payload in [payloadV3(fields), payloadV2(fields)] where key.isValidSignature(signatureBytes, for: Array(payload.utf8)) {
            return .success(raw)
        }
        return .failure(.badSignature)
    }
}
