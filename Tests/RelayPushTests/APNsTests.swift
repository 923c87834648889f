import Crypto
import Foundation
import RelayCore
import RelayPush
import Testing

@Suite struct APNsTokenTests {
    private func parts(_ token: String) throws -> (header: JSONValue, claims: JSONValue, input: String, signature: [UInt8]) {
        let pieces = token.split(separator: ".").map(String.init)
        try #require(pieces.count == 3)
        let header = try #require(Base64URL.decode(pieces[0]).flatMap { JSONValue.parse($0) })
        let claims = try #require(Base64URL.decode(pieces[1]).flatMap { JSONValue.parse($0) })
        return (header, claims, pieces[0] + "." + pieces[1], try #require(Base64URL.decode(pieces[2])))
    }

    @Test func aTokenIsAnES256JWTTheKeyVerifiesAndIsReusedFor50Minutes() throws {
        let key = P256.Signing.PrivateKey()
        let clock = TestClock(startMillis: 1_800_000_000_000)
        let tokens = try APNsToken(pem: key.pemRepresentation, keyID: "KEY123", teamID: "TEAM456", clock: clock)
        let first = try tokens.current()
        let (header, claims, input, signature) = try parts(first)
        #expect(header == .object(["alg": .string("ES256"), "kid": .string("KEY123")]))
        #expect(claims == .object(["iss": .string("TEAM456"), "iat": .int(1_800_000_000)]))
        let parsed = try P256.Signing.ECDSASignature(rawRepresentation: signature)
        #expect(key.publicKey.isValidSignature(parsed, for: Array(input.utf8)))

        clock.advance(millis: 49 * 60_000)
        #expect(try tokens.current() == first, "reused, never minted per send")
        clock.advance(millis: 60_000)
        let second = try tokens.current()
        #expect(second != first)
        #expect(try parts(second).claims["iat"] == .int(1_800_000_000 + 50 * 60))
        tokens.invalidate()
        clock.advance(millis: 1_000)
        #expect(try tokens.current() != second, "re-minted after ExpiredProviderToken")
    }

    @Test func aKeyThatIsNotAP256PEMIsRefused() {
        #expect(throws: (any Error).self) { try APNsToken(pem: "not a key", keyID: "k", teamID: "t", clock: TestClock(startMillis: 0)) }
    }
}

@Suite struct APNsPayloadTests {
    @Test func aShortAlertIsSentWhole() throws {
        let text = try #require(APNsPayload.alert(title: "Claude", body: "done", threadID: "cv_1", custom: ["sessionId": .string("s")]))
        let payload = try #require(JSONValue.parse(text))
        #expect(payload["aps"]?["alert"]?["body"]?.stringValue == "done")
        #expect(payload["aps"]?["thread-id"]?.stringValue == "cv_1")
        #expect(payload["sessionId"]?.stringValue == "s")
    }

    @Test func aLongBodyIsShortenedNeverTheJSON() throws {
        let body = String(repeating: "é🎉x\"", count: 5_000)
        let text = try #require(APNsPayload.alert(title: "t", body: body, threadID: nil))
        #expect(text.utf8.count <= APNsPayload.maxBytes)
        #expect(text.utf8.count > APNsPayload.maxBytes - 16, "as much of the body as fits")
        let shortened = try #require(JSONValue.parse(text)?["aps"]?["alert"]?["body"]?.stringValue)
        #expect(shortened.hasSuffix("…") && body.hasPrefix(String(shortened.dropLast())))
        #expect(APNsPayload.alert(title: "t", body: "b", threadID: nil, custom: ["pad": .string(String(repeating: "x", count: 5_000))]) == nil)
    }
}
