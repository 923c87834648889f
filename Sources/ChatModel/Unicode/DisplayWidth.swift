/// How many terminal columns text takes.
///
/// Rules (East_Asian_Width data: Unicode ``eastAsianWidthVersion``; emoji presentation: the Swift
/// standard library's Unicode data, 16.0 for Swift 6.1 and later):
/// - East_Asian_Width W or F, or Emoji_Presentation: 2 columns. Ambiguous (A) counts as 1.
/// - Nonspacing and enclosing marks (Mn, Me), format characters (Cf, except SOFT HYPHEN) and the
///   Hangul medial vowels / final consonants that join a syllable: 0 columns.
/// - Controls (Cc), LINE and PARAGRAPH SEPARATOR: shown as U+FFFD, 1 column.
/// - A grapheme (Character) is as wide as its first scalar that has a width, at most 2; a grapheme
///   holding VARIATION SELECTOR-16 after an emoji base, or a pair of regional indicators (a flag), is 2.
///   So ZWJ sequences, skin tones and keycaps count as one 2-column emoji, as most terminals draw them.
public enum DisplayWidth {
    /// What control characters are shown as.
    public static let replacement: Character = "\u{FFFD}"

    /// Columns of a whole string (the sum of its graphemes); newlines count as controls.
    public static func of(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// Columns of one grapheme: 0, 1 or 2.
    public static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if isControl(first) { return 1 }
        if scalars.count > 1 {
            if isRegionalIndicator(first), scalars.dropFirst().first.map(isRegionalIndicator) == true { return 2 }
            if first.properties.isEmoji, scalars.contains("\u{FE0F}") { return 2 }
        }
        for scalar in scalars {
            let width = of(scalar)
            if width > 0 { return width }
        }
        return 0
    }

    /// Columns of one scalar on its own: 0, 1 or 2 (controls count 1: they are shown as U+FFFD).
    public static func of(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value >= 0x20, value < 0x7F { return 1 }
        if isControl(scalar) { return 1 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark: return 0
        case .format: return value == 0xAD ? 1 : 0
        default: break
        }
        if (0x1160...0x11FF).contains(value) || (0xD7B0...0xD7FF).contains(value) { return 0 }
        if isWide(value) || scalar.properties.isEmojiPresentation { return 2 }
        return 1
    }

    /// Whether a scalar is drawn as U+FFFD: C0/C1 controls, DEL, LINE and PARAGRAPH SEPARATOR.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029
    }

    /// Text as it should reach the terminal: CR LF and CR become LF, a tab becomes four spaces,
    /// every other control becomes U+FFFD. Only LF is left for the wrapper to break on.
    public static func sanitized(_ text: some StringProtocol) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "\n", "\r\n", "\r": out.append("\n")
            case "\t": out.append("    ")
            default:
                if let first = character.unicodeScalars.first, isControl(first) { out.append(replacement) } else { out.append(character) }
            }
        }
        return out
    }

    /// REGIONAL INDICATOR SYMBOL LETTER A…Z: two of them make a flag.
    static func isRegionalIndicator(_ scalar: Unicode.Scalar) -> Bool {
        (0x1F1E6...0x1F1FF).contains(scalar.value)
    }

    static func isWide(_ value: UInt32) -> Bool {
        var low = 0
        var high = wideRanges.count - 1
        while low <= high {
            let middle = (low + high) / 2
            let range = wideRanges[middle]
            if value < range.lowerBound {
                high = middle - 1
            } else if value > range.upperBound {
                low = middle + 1
            } else {
                return true
            }
        }
        return false
    }
}
