/// A section of the file: the top level, a `[table]`, or the nth `[[array]]` entry.
struct ConfigSection: Equatable {
    /// nil for the top level.
    var name: String?
    /// 0-based index among the `[[name]]` entries; nil for a plain `[name]` table.
    var occurrence: Int?

    static let root = ConfigSection(name: nil, occurrence: nil)

    /// As written in the file, for messages: `[clawline]`, `[[backends]]`.
    var label: String? {
        guard let name else { return nil }
        return occurrence == nil ? "[\(name)]" : "[[\(name)]]"
    }
}

/// Finds where a section or key is written, by a plain scan of the text: TOMLKit reports no positions.
///
/// Understands `[table]`, `[[array]]` headers (by occurrence), `key =` lines and skips comments and
/// multi-line strings; keys written as dotted keys or inside inline tables fall back to the nearest
/// line it can find.
struct ConfigLineLocator {
    private struct Header {
        var name: String
        var isArray: Bool
        var line: Int
    }

    private struct Key {
        /// Index into `headers`; nil for the top level.
        var header: Int?
        var name: String
        var line: Int
    }

    private var headers: [Header] = []
    private var keys: [Key] = []

    init(text: String) {
        var inMultilineString = false
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = index + 1
            let quotes = rawLine.occurrences(of: #"""""#) + rawLine.occurrences(of: "'''")
            defer { if quotes % 2 == 1 { inMultilineString.toggle() } }
            if inMultilineString { continue }
            let content = Self.strippingComment(rawLine).trimmingWhitespace()
            if content.hasPrefix("[["), content.hasSuffix("]]"), !content.contains("=") {
                headers.append(Header(name: Self.unquoted(content.dropFirst(2).dropLast(2)), isArray: true, line: line))
            } else if content.hasPrefix("["), content.hasSuffix("]"), !content.contains("="), !content.contains(",") {
                headers.append(Header(name: Self.unquoted(content.dropFirst().dropLast()), isArray: false, line: line))
            } else if let equals = content.firstIndex(of: "=") {
                keys.append(Key(header: headers.isEmpty ? nil : headers.count - 1, name: Self.unquoted(content[..<equals]), line: line))
            }
        }
    }

    /// The line of `key` in `section`, else of the section's header, else nil.
    func line(of section: ConfigSection, key: String? = nil) -> Int? {
        guard let name = section.name else {
            return key.flatMap { key in keys.first { $0.header == nil && $0.name == key }?.line }
        }
        guard let header = headerIndex(of: section) else {
            // Only sub-tables (`[name.key]`) written, or `name = { ... }` / `name.key = ...` at the top level.
            let dotted = key.map { "\(name).\($0)" }
            if let subTable = headers.first(where: { $0.name == dotted || $0.name.hasPrefix(name + ".") }) { return subTable.line }
            return keys.first { $0.header == nil && ($0.name == dotted || $0.name == name || $0.name.hasPrefix(name + ".")) }?.line
        }
        guard let key else { return headers[header].line }
        if let found = keys.first(where: { $0.header == header && $0.name == key }) { return found.line }
        if let subTable = headers.firstIndex(where: { !$0.isArray && $0.name == "\(name).\(key)" }) { return headers[subTable].line }
        return headers[header].line
    }

    private func headerIndex(of section: ConfigSection) -> Int? {
        let matching = headers.indices.filter { headers[$0].name == section.name && headers[$0].isArray == (section.occurrence != nil) }
        let wanted = section.occurrence ?? 0
        return wanted < matching.count ? matching[wanted] : nil
    }

    private static func strippingComment(_ line: Substring) -> Substring {
        var quote: Character?
        for index in line.indices {
            let character = line[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "#" {
                return line[..<index]
            }
        }
        return line
    }

    private static func unquoted(_ text: Substring) -> String {
        let trimmed = text.trimmingWhitespace()
        if trimmed.count >= 2, let first = trimmed.first, first == "\"" || first == "'", trimmed.last == first {
            return String(trimmed.dropFirst().dropLast())
        }
        return String(trimmed)
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        guard let start = firstIndex(where: { !$0.isWhitespace }), let end = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return self[start...end]
    }

    fileprivate func occurrences(of needle: String) -> Int {
        var count = 0
        var rest = self[...]
        while let range = rest.firstRange(of: needle) {
            count += 1
            rest = rest[range.upperBound...]
        }
        return count
    }
}
