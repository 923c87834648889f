import RelayCore
import Testing

@Suite struct HS256TokenTests {
    let signer = HS256Token(secret: Array("a deterministic test key of 32 b".utf8))
    let claims = DeviceClaims(sub: "u1", deviceId: "d1", isAdmin: true, iat: 1_000, exp: 2_000)

    @Test func roundTrips() throws {
        let token = signer.sign(claims)
        #expect(token.split(separator: ".").count == 3)
        #expect(try signer.verify(token, nowSeconds: 1_500).get() == claims)
    }

    @Test func rejectsExpiredForeignAndTamperedTokens() {
        let token = signer.sign(claims)
        #expect(signer.verify(token, nowSeconds: 2_000) == .failure(.expired))
        let other = HS256Token(secret: Array("another key".utf8))
        #expect(other.verify(token, nowSeconds: 1_500) == .failure(.badSignature))
        var parts = token.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(Array(#"{"sub":"u2","deviceId":"d1","isAdmin":true,"iat":1000,"exp":2000}"#.utf8))
        #expect(signer.verify(parts.joined(separator: "."), nowSeconds: 1_500) == .failure(.badSignature))
    }

    @Test func rejectsGarbageAndOtherAlgorithms() {
        #expect(signer.verify("", nowSeconds: 0) == .failure(.malformed))
        #expect(signer.verify("not.a.jwt", nowSeconds: 0) == .failure(.malformed))
        let none = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(Array("{}".utf8)) + "."
        #expect(signer.verify(none, nowSeconds: 0) == .failure(.malformed))
    }
}

@Suite struct RedactorTests {
    @Test func redactsSecretKeysAnywhereInJSON() {
        let body = Array(#"{"type":"auth","token":"abc","nested":{"deviceToken":"x","password":"p"},"list":[{"signature":"s"}],"content":"hi"}"#.utf8)
        let redacted = Redactor.redact(body)
        #expect(!redacted.contains("\"abc\""))
        #expect(redacted.contains(Redactor.fingerprint("abc")))
        #expect(redacted.contains(Redactor.fingerprint("x")))
        #expect(redacted.contains(Redactor.fingerprint("p")))
        #expect(redacted.contains(Redactor.fingerprint("s")))
        #expect(redacted.contains("\"content\":\"hi\""))
    }

    @Test func redactsJWTsUnderAnyKeyAndBearerHeaders() {
        let jwt = HS256Token(secret: [1, 2, 3]).sign(DeviceClaims(sub: "u", deviceId: "d", isAdmin: false, iat: 0, exp: 1))
        let redacted = Redactor.redact(Array("{\"content\":\"\(jwt)\"}".utf8))
        #expect(!redacted.contains(jwt))
        let header = Redactor.redact(Array("POST /upload\nauthorization: Bearer \(jwt)".utf8))
        #expect(!header.contains(jwt))
        #expect(header.hasPrefix("POST /upload\nauthorization: sha256:"))
        #expect(!Redactor.redactText("x Bearer secret-value y").contains("secret-value"))
    }

    @Test func fingerprintIsSha256Prefix() {
        #expect(Redactor.fingerprint("abc") == "sha256:ba7816bf")
    }
}

@Suite struct RedactorFastPathTests {
    @Test func bodiesWithoutSecretsAreKeptVerbatim() {
        let body = #"{"type":"message","id":"c_1","content":"hello"}"#
        #expect(Redactor.redact(Array(body.utf8)) == body)
    }

    @Test func anyCaseOfASecretWordTriggersRedaction() {
        #expect(Redactor.redact(Array(#"{"AuthToken":"abc"}"#.utf8)).contains(Redactor.fingerprint("abc")))
        #expect(!Redactor.redact(Array("GET /\nAuthorization: Bearer xyz".utf8)).contains("xyz"))
    }
}
