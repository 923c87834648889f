import Crypto
import Foundation

/// The claims a Clawline device token carries.
public struct DeviceClaims: Codable, Sendable, Equatable {
    public var sub: String
    public var deviceId: String
    public var isAdmin: Bool
    public var iat: Int64
    public var exp: Int64

    public init(sub: String, deviceId: String, isAdmin: Bool, iat: Int64, exp: Int64) {
        self.sub = sub
        self.deviceId = deviceId
        self.isAdmin = isAdmin
        self.iat = iat
        self.exp = exp
    }
}

public enum TokenError: Error, Equatable, Sendable {
    case malformed
    case badSignature
    case expired
    case missingClaim(String)
}

/// JWT HS256 over swift-crypto's HMAC: compact serialization, constant-time signature check.
public struct HS256Token: Sendable {
    private let key: SymmetricKey

    public init(secret: [UInt8]) { key = SymmetricKey(data: secret) }

    public func sign(_ claims: DeviceClaims) -> String {
        let header = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let payload = Base64URL.encode(Array((try? encoder.encode(claims)) ?? Data()))
        let input = header + "." + payload
        let signature = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: key)
        return input + "." + Base64URL.encode(Array(signature))
    }

    /// Checks signature, algorithm and expiry (seconds) and returns the claims.
    public func verify(_ token: String, nowSeconds: Int64) -> Result<DeviceClaims, TokenError> {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(String(parts[0])),
            let header = JSONValue.parse(headerBytes), header["alg"]?.stringValue == "HS256",
            let signature = Base64URL.decode(String(parts[2])), let payloadBytes = Base64URL.decode(String(parts[1]))
        else { return .failure(.malformed) }
        let input = Array("\(parts[0]).\(parts[1])".utf8)
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: input, using: key) else {
            return .failure(.badSignature)
        }
        guard let payload = JSONValue.parse(payloadBytes) else { return .failure(.malformed) }
        guard let sub = payload["sub"]?.stringValue else { return .failure(.missingClaim("sub")) }
        guard let deviceId = payload["deviceId"]?.stringValue else { return .failure(.missingClaim("deviceId")) }
        guard let exp = payload["exp"]?.intValue else { return .failure(.missingClaim("exp")) }
        let claims = DeviceClaims(
            sub: sub,
            deviceId: deviceId,
            isAdmin: payload["isAdmin"]?.boolValue ?? false,
            iat: payload["iat"]?.intValue ?? 0,
            exp: exp
        )
        guard exp > nowSeconds else { return .failure(.expired) }
        return .success(claims)
    }
}

/// Base64 with the URL alphabet and no padding (RFC 7515).
public enum Base64URL {
    public static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    public static func decode(_ text: String) -> [UInt8]? {
        guard text.utf8.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "=") }) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map { Array($0) }
    }
}
