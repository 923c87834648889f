import Crypto
import Foundation
import RelayCore
import Testing

@testable import GatewayWire

@Suite struct DeviceAuthTests {
    func fields(_ id: String = "dev-1", token: String = "", platform: String = "", family: String = "") -> DeviceAuth.SignedFields {
        DeviceAuth.SignedFields(
            deviceID: id,
            clientID: "openclaw-macos",
            clientMode: "ui",
            role: "operator",
            scopes: ["operator.admin", "operator.read"],
            signedAtMillis: 1_700_000_000_000,
            token: token,
            nonce: "nonce-abc",
            platform: platform,
            deviceFamily: family
        )
    }

    @Test func publicTestVectors() {
        #expect(DeviceAuth.payloadV2(fields()) == "v2|dev-1|openclaw-macos|ui|operator|operator.admin,operator.read|1700000000000||nonce-abc")
        #expect(
            DeviceAuth.payloadV3(fields(token: "tok-123", platform: "  IOS  ", family: "  iPhone  "))
                == "v3|dev-1|openclaw-macos|ui|operator|operator.admin,operator.read|1700000000000|tok-123|nonce-abc|ios|iphone"
        )
        let third = DeviceAuth.SignedFields(
            deviceID: "dev-2",
            clientID: "openclaw-ios",
            clientMode: "ui",
            role: "operator",
            scopes: ["operator.read"],
            signedAtMillis: 1_700_000_000_001,
            token: "",
            nonce: "nonce-def",
            platform: "",
            deviceFamily: ""
        )
        #expect(DeviceAuth.payloadV3(third) == "v3|dev-2|openclaw-ios|ui|operator|operator.read|1700000000001||nonce-def||")
    }

    func signed(_ sign: (DeviceAuth.SignedFields) -> String) -> (DeviceAuth.SignedFields, String, String) {
        let key = Curve25519.Signing.PrivateKey()
        let raw = Array(key.publicKey.rawRepresentation)
        var f = fields(DeviceAuth.deviceID(forRawKey: raw), platform: "iOS", family: "iPhone")
        f.signedAtMillis = 1_800_000_000_000
        let signature = try! key.signature(for: Array(sign(f).utf8))
        return (f, Base64URL.encode(raw), Base64URL.encode(Array(signature)))
    }

    @Test func acceptsV3AndV2Signatures() {
        for builder in [DeviceAuth.payloadV3, DeviceAuth.payloadV2] {
            let (f, key, signature) = signed(builder)
            #expect(
                (try? DeviceAuth.verify(f, publicKey: key, signature: signature, expectedNonce: "nonce-abc", nowMillis: f.signedAtMillis).get())
                    != nil
            )
        }
    }

    @Test func rejectsEveryBrokenPart() {
        let (f, key, signature) = signed(DeviceAuth.payloadV3)
        let now = f.signedAtMillis
        #expect(DeviceAuth.verify(f, publicKey: key, signature: signature, expectedNonce: "other", nowMillis: now) == .failure(.nonceMismatch))
        #expect(DeviceAuth.verify(f, publicKey: key, signature: signature, expectedNonce: "nonce-abc", nowMillis: now + 121_000) == .failure(.stale))
        var wrongID = f
        wrongID.deviceID = String(repeating: "0", count: 64)
        #expect(DeviceAuth.verify(wrongID, publicKey: key, signature: signature, expectedNonce: "nonce-abc", nowMillis: now) == .failure(.idMismatch))
        var tampered = f
        tampered.role = "node"
        #expect(
            DeviceAuth.verify(tampered, publicKey: key, signature: signature, expectedNonce: "nonce-abc", nowMillis: now) == .failure(.badSignature)
        )
        #expect(DeviceAuth.verify(f, publicKey: "not a key", signature: signature, expectedNonce: "nonce-abc", nowMillis: now) == .failure(.badKey))
    }

    @Test func acceptsStandardBase64AndPEMKeys() {
        let (f, key, signature) = signed(DeviceAuth.payloadV3)
        let raw = Base64URL.decode(key)!
        let standard = Data(raw).base64EncodedString()
        let pem = "-----BEGIN PUBLIC KEY-----\n" + Data(DeviceAuth.spkiPrefix + raw).base64EncodedString() + "\n-----END PUBLIC KEY-----\n"
        let standardSignature = Data(Base64URL.decode(signature)!).base64EncodedString()
        for publicKey in [standard, pem] {
            #expect(
                (try? DeviceAuth.verify(
                    f,
                    publicKey: publicKey,
                    signature: standardSignature,
                    expectedNonce: "nonce-abc",
                    nowMillis: f.signedAtMillis
                ).get()) != nil
            )
        }
    }
}
