import Foundation

/// The validity end of a PEM certificate, read from its DER (RFC 5280 §4.1): lws loads an expired
/// certificate without complaint, so the relay checks the date itself at start-up.
enum CertificateDates {
    /// `notAfter` of the first certificate in the PEM file, or nil when it cannot be read.
    static func notAfter(pemPath: String) -> Date? {
        guard let text = try? String(contentsOfFile: pemPath, encoding: .utf8),
            let begin = text.range(of: "-----BEGIN CERTIFICATE-----"),
            let end = text.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<text.endIndex),
            let der = Data(base64Encoded: String(text[begin.upperBound..<end.lowerBound]).filter { !$0.isWhitespace })
        else { return nil }
        var reader = DERReader(bytes: Array(der))
        guard var certificate = reader.enter(tag: 0x30), var tbs = certificate.enter(tag: 0x30) else { return nil }
        if tbs.peekTag == 0xA0 { _ = tbs.skip() }  // [0] version
        guard tbs.skip(), tbs.skip(), tbs.skip() else { return nil }  // serial, signature, issuer
        guard var validity = tbs.enter(tag: 0x30), validity.skip() else { return nil }  // notBefore
        return validity.time()
    }

    private struct DERReader {
        let bytes: [UInt8]
        var index = 0
        var end: Int

        init(bytes: [UInt8], index: Int = 0, end: Int? = nil) {
            self.bytes = bytes
            self.index = index
            self.end = end ?? bytes.count
        }

        var peekTag: UInt8? { index < end ? bytes[index] : nil }

        /// Tag, content start and content length of the element at `index`.
        private func header() -> (tag: UInt8, start: Int, length: Int)? {
            guard index + 2 <= end else { return nil }
            let tag = bytes[index]
            var length = Int(bytes[index + 1])
            var start = index + 2
            if length & 0x80 != 0 {
                let count = length & 0x7F
                guard count >= 1, count <= 4, start + count <= end else { return nil }
                length = bytes[start..<start + count].reduce(0) { $0 << 8 | Int($1) }
                start += count
            }
            guard start + length <= end else { return nil }
            return (tag, start, length)
        }

        mutating func skip() -> Bool {
            guard let element = header() else { return false }
            index = element.start + element.length
            return true
        }

        mutating func enter(tag: UInt8) -> DERReader? {
            guard let element = header(), element.tag == tag else { return nil }
            index = element.start + element.length
            return DERReader(bytes: bytes, index: element.start, end: element.start + element.length)
        }

        /// A UTCTime (YYMMDDHHMMSSZ) or GeneralizedTime (YYYYMMDDHHMMSSZ).
        mutating func time() -> Date? {
            guard let element = header(), element.tag == 0x17 || element.tag == 0x18 else { return nil }
            let text = String(decoding: bytes[element.start..<element.start + element.length], as: UTF8.self)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = element.tag == 0x17 ? "yyMMddHHmmss'Z'" : "yyyyMMddHHmmss'Z'"
            return formatter.date(from: text)
        }
    }
}
