import Foundation

/// A `multipart/form-data` body split into parts; pure, over bytes already on disk or in memory.
public struct MultipartForm: Sendable {
    public struct Part: Sendable {
        public var name: String
        public var filename: String?
        public var contentType: String?
        /// Where the part's bytes lie in the body.
        public var range: Range<Int>
    }

    public var parts: [Part]

    /// The boundary from a `Content-Type: multipart/form-data; boundary=...` header.
    public static func boundary(fromContentType contentType: String) -> String? {
        let lower = contentType.lowercased()
        guard lower.hasPrefix("multipart/form-data") else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else { continue }
            let value = pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            return value.isEmpty ? nil : value
        }
        return nil
    }

    /// Parses `body`; nil when it is not well-formed multipart with this boundary.
    public static func parse(_ body: Data, boundary: String) -> MultipartForm? {
        let delimiter = Data(("--" + boundary).utf8)
        let headerEnd = Data("\r\n\r\n".utf8)
        guard let first = body.range(of: delimiter) else { return nil }
        var parts: [Part] = []
        var cursor = first.upperBound
        while true {
            // After a delimiter: "--" ends the body, "\r\n" starts a part.
            if body[cursor..<min(cursor + 2, body.endIndex)] == Data("--".utf8) { break }
            guard body[cursor..<min(cursor + 2, body.endIndex)] == Data("\r\n".utf8) else { return nil }
            let headersStart = cursor + 2
            guard let headersRange = body.range(of: headerEnd, in: headersStart..<body.endIndex) else { return nil }
            let headerText = String(decoding: body[headersStart..<headersRange.lowerBound], as: UTF8.self)
            let contentStart = headersRange.upperBound
            guard let next = body.range(of: Data("\r\n".utf8) + delimiter, in: contentStart..<body.endIndex) else { return nil }
            var part = Part(name: "", filename: nil, contentType: nil, range: (contentStart - body.startIndex)..<(next.lowerBound - body.startIndex))
            for line in headerText.components(separatedBy: "\r\n") {
                let pieces = line.split(separator: ":", maxSplits: 1)
                guard pieces.count == 2 else { continue }
                let name = pieces[0].trimmingCharacters(in: .whitespaces).lowercased()
                let value = pieces[1].trimmingCharacters(in: .whitespaces)
                if name == "content-type" { part.contentType = value }
                if name == "content-disposition" {
                    part.name = parameter("name", in: value) ?? ""
                    part.filename = parameter("filename", in: value)
                }
            }
            parts.append(part)
            cursor = next.upperBound
        }
        return MultipartForm(parts: parts)
    }

    private static func parameter(_ key: String, in header: String) -> String? {
        for piece in header.split(separator: ";") {
            let pair = piece.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == key else { continue }
            return pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return nil
    }
}
