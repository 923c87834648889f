import RelayCore
import Testing

/// The table-driven secret scan finds exactly what comparing every needle at every offset finds.
@Suite struct RedactorScanTests {
    /// The scan as it was: every needle compared at every offset, case folded with `| 0x20`.
    static func reference(_ body: [UInt8]) -> Bool {
        let needles = ["token", "password", "signature", "secret", "authorization", "bearer", "eyj"].map { Array($0.utf8) }
        guard body.count >= 3 else { return false }
        for index in body.indices {
            for needle in needles where needle[0] == body[index] | 0x20 && index + needle.count <= body.count {
                if (1..<needle.count).allSatisfy({ body[index + $0] | 0x20 == needle[$0] }) { return true }
            }
        }
        return false
    }

    /// SplitMix64, so a failure repeats.
    struct Random: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test func agreesWithComparingEveryNeedle() {
        var random = Random(state: 15)
        // Needle letters in both cases, their `| 0x20` look-alikes, and pieces of the needles.
        let alphabet = Array("tokenpaswrdigucbyjTOKENPASWRDIGUCBYJ@_\"{}:. 0".utf8) + [0x9f, 0xe2, 0xc3]
        let pieces = [
            "tok", "toke", "TOKEN", "secre", "SeCrEt", "bear", "BEARER", "eY", "eyJ", "sig", "signatur", "passwor", "authorizatio", "AUTHORIZATION",
        ]
        for _ in 0..<20_000 {
            var body: [UInt8] = []
            for _ in 0..<Int.random(in: 0...40, using: &random) {
                if Int.random(in: 0..<6, using: &random) == 0 {
                    body += Array(pieces.randomElement(using: &random)!.utf8)
                } else if Int.random(in: 0..<10, using: &random) == 0 {
                    body.append(UInt8.random(in: 0...255, using: &random))
                } else {
                    body.append(alphabet.randomElement(using: &random)!)
                }
            }
            #expect(Redactor.mightHoldSecret(body) == Self.reference(body), "\(body)")
        }
    }

    @Test func findsEveryNeedleAtTheEdges() {
        for word in ["token", "password", "signature", "secret", "authorization", "bearer", "eyJ", "TOKEN", "Bearer", "EYJ"] {
            #expect(Redactor.mightHoldSecret(Array(word.utf8)), "\(word)")
            #expect(Redactor.mightHoldSecret(Array("{\"x\":\"\(word)".utf8)), "\(word)")
            #expect(!Redactor.mightHoldSecret(Array(word.dropLast().utf8)), "\(word)")
        }
        #expect(!Redactor.mightHoldSecret(Array(#"{"type":"message","content":"hello"}"#.utf8)))
    }
}
