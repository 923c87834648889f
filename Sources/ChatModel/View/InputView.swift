/// The input area: the text cut into rows, and where the cursor is.
public struct InputView: Equatable, Sendable {
    /// The visible rows, top to bottom, prompt included.
    public var rows: [String]
    /// The cursor's row in ``rows`` and its column in display columns.
    public var cursorRow: Int
    public var cursorColumn: Int
    /// All rows of the text, before cutting to the area's height.
    public var totalRows: Int

    /// Lays out `characters` (newlines start new rows; long lines wrap between graphemes; controls are
    /// drawn as ``DisplayWidth/visible(_:)`` says) after a
    /// prompt, with continuation rows indented as far as the prompt. With `height`, keeps the rows
    /// round the cursor. The cursor never sits past the last column: at the end of a full row it goes
    /// to the start of the next.
    public static func render(_ characters: [Character], cursor: Int, prompt: String, width: Int, height: Int? = nil) -> InputView {
        let width = max(1, width)
        let promptWidth = DisplayWidth.of(prompt) < width ? DisplayWidth.of(prompt) : 0
        let indent = String(repeating: " ", count: promptWidth)
        var rows: [String] = []
        var cursorRow = 0
        var cursorColumn = promptWidth
        let cursor = max(0, min(cursor, characters.count))
        let cursorLine = characters[..<cursor].reduce(0) { $0 + ($1 == "\n" ? 1 : 0) }
        var lineStart = 0
        for (lineIndex, line) in characters.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = Array(line)
            let ranges = TextWrap.rowRanges(line, width: width - promptWidth)
            let firstRow = rows.count
            for range in ranges {
                let prefix = rows.isEmpty ? TextWrap.fit(prompt, width: promptWidth) : indent
                rows.append(prefix + String(line[range].map(DisplayWidth.visible)))
            }
            if lineIndex == cursorLine {
                let local = cursor - lineStart
                let rangeIndex = ranges.firstIndex { local < $0.upperBound } ?? ranges.count - 1
                cursorRow = firstRow + rangeIndex
                cursorColumn = promptWidth + DisplayWidth.of(String(line[ranges[rangeIndex].lowerBound..<local]))
                if cursorColumn >= width, promptWidth < width {
                    cursorRow += 1
                    cursorColumn = promptWidth
                    if cursorRow == firstRow + ranges.count { rows.insert(indent, at: cursorRow) }
                }
            }
            lineStart += line.count + 1
        }
        let total = rows.count
        guard let height, height > 0, total > height else {
            return InputView(rows: rows, cursorRow: cursorRow, cursorColumn: cursorColumn, totalRows: total)
        }
        let start = max(0, min(cursorRow - height + 1, total - height))
        return InputView(rows: Array(rows[start..<(start + height)]), cursorRow: cursorRow - start, cursorColumn: cursorColumn, totalRows: total)
    }
}
