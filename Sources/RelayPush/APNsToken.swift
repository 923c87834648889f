import Crypto
import Foundation
import RelayCore

/// The provider token APNs wants in `authorization: bearer …` (token-based auth): an ES256 JWT
/// `{alg, kid}.{iss, iat}` signed with the team's `.p8` key. Apple refuses tokens older than an
/// hour and throttles ones minted too often, so one is cached and re-minted every 50 minutes
/// (or at once after `ExpiredProviderToken`), never per send.
public final class APNsToken {
    public static let lifetimeSeconds: Int64 = 50 * 60

    private let key: P256.Signing.PrivateKey
    private let keyID: String
    private let teamID: String
    private let clock: any Clock
    private var cached: (token: String, issuedAt: Int64)?

    /// `pem` is the `.p8` file's text (a PKCS #8 P-256 private key).
    public init(pem: String, keyID: String, teamID: String, clock: any Clock) throws {
        key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        self.keyID = keyID
        self.teamID = teamID
        self.clock = clock
    }

    /// The current token, minted when there is none or it is 50 minutes old.
    public func current() throws -> String {
        let now = clock.nowMillis() / 1000
        if let cached, now - cached.issuedAt < Self.lifetimeSeconds { return cached.token }
        let token = try mint(issuedAt: now)
        cached = (token, now)
        return token
    }

    /// Drops the cached token (after APNs answered `ExpiredProviderToken`).
    public func invalidate() { cached = nil }

    private func mint(issuedAt: Int64) throws -> String {
        let header = JSONValue.object(["alg": .string("ES256"), "kid": .string(keyID)]).encoded()
        let claims = JSONValue.object(["iss": .string(teamID), "iat": .int(issuedAt)]).encoded()
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        // JWS ES256 is the raw r‖s pair (64 bytes), not DER.
        let signature = try key.signature(for: Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }
}
