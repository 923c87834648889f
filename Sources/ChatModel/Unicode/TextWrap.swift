/// Breaking text into terminal rows by display columns (see ``DisplayWidth``).
///
/// - Important: A grapheme is never split. A grapheme wider than the row (a 2-column character
///   when the width is 1) gets a row of its own, the only case where a row is wider than asked.
public enum TextWrap {
    /// Word-wraps sanitized text (see ``DisplayWidth/sanitized(_:)``) into rows of at most `width`
    /// columns. Every LF starts a new row; a row breaks after the last space that fits, or between
    /// graphemes when a word is longer than the row. A space that falls exactly on a break is dropped;
    /// every other character is kept, in order.
    public static func wrap(_ text: String, width: Int) -> [String] {
        let width = max(1, width)
        return text.split(separator: "\n", omittingEmptySubsequences: false).flatMap { wrapLine(Array($0), width: width) }
    }

    /// Where rows start when `characters` (one line, no LF) is cut between graphemes into rows of at
    /// most `width` columns, ignoring spaces: for the input line, whose cursor must map to a cell.
    /// Always at least one row.
    public static func rowRanges(_ characters: [Character], width: Int) -> [Range<Int>] {
        let width = max(1, width)
        var ranges: [Range<Int>] = []
        var start = 0
        var columns = 0
        for (index, character) in characters.enumerated() {
            let columnsOfCharacter = DisplayWidth.of(character)
            if columns + columnsOfCharacter > width, index > start {
                ranges.append(start..<index)
                start = index
                columns = 0
            }
            columns += columnsOfCharacter
        }
        ranges.append(start..<characters.count)
        return ranges
    }

    /// `text` cut to at most `width` columns, ending in "…" when something was cut.
    public static func fit(_ text: String, width: Int) -> String {
        guard width > 0 else { return "" }
        if DisplayWidth.of(text) <= width { return text }
        var out = ""
        var columns = 0
        for character in text {
            let columnsOfCharacter = DisplayWidth.of(character)
            if columns + columnsOfCharacter > width - 1 { break }
            out.append(character)
            columns += columnsOfCharacter
        }
        return out + "…"
    }

    /// `text` cut or padded with spaces to exactly `width` columns.
    public static func padded(_ text: String, width: Int) -> String {
        let fitted = fit(text, width: width)
        return fitted + String(repeating: " ", count: max(0, width - DisplayWidth.of(fitted)))
    }

    private static func wrapLine(_ characters: [Character], width: Int) -> [String] {
        var rows: [String] = []
        var row: [Character] = []
        var columns = 0
        var afterLastSpace: Int?
        for character in characters {
            let columnsOfCharacter = DisplayWidth.of(character)
            if character == " ", columns + 1 > width {
                rows.append(String(row))
                (row, columns, afterLastSpace) = ([], 0, nil)
                continue
            }
            if columns + columnsOfCharacter > width, !row.isEmpty {
                if let split = afterLastSpace, split < row.count {
                    rows.append(String(row[..<split]))
                    row = Array(row[split...])
                    columns = DisplayWidth.of(String(row))
                } else {
                    rows.append(String(row))
                    (row, columns) = ([], 0)
                }
                afterLastSpace = nil
                if columns + columnsOfCharacter > width, !row.isEmpty {
                    rows.append(String(row))
                    (row, columns) = ([], 0)
                }
            }
            row.append(character)
            columns += columnsOfCharacter
            if character == " " { afterLastSpace = row.count }
        }
        rows.append(String(row))
        return rows
    }
}
