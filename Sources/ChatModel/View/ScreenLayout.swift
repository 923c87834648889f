/// A rectangle of terminal cells; rows and columns from 0 at the top left.
public struct ScreenRect: Equatable, Sendable {
    public var row: Int
    public var column: Int
    public var width: Int
    public var height: Int

    public init(row: Int, column: Int, width: Int, height: Int) {
        self.row = row
        self.column = column
        self.width = max(0, width)
        self.height = max(0, height)
    }
}

/// Where the parts of the screen go:
///
/// ```
/// title                                   (row 0, full width)
/// buffer list │ conversation             (the list only from 60 columns)
/// status                                  (full width)
/// input                                   (1 row, growing with the text to a third of the screen)
/// ```
/// The column between the buffer list and the conversation is a separator the screen draws.
public struct ScreenLayout: Equatable, Sendable {
    public static let sidebarMinimumColumns = 60

    public var title: ScreenRect
    /// `nil` on narrow terminals.
    public var sidebar: ScreenRect?
    public var conversation: ScreenRect
    public var status: ScreenRect
    public var input: ScreenRect

    /// The layout for a terminal of `columns` × `rows` whose input text needs `inputRows` rows.
    public static func compute(columns: Int, rows: Int, inputRows: Int) -> ScreenLayout {
        let columns = max(1, columns)
        let rows = max(0, rows)
        let sidebarWidth = columns >= sidebarMinimumColumns ? min(24, max(12, columns / 5)) : 0
        let inputHeight = min(rows, max(1, min(inputRows, max(1, rows / 3))))
        let middleHeight = max(0, rows - inputHeight - 2)
        let conversationColumn = sidebarWidth > 0 ? sidebarWidth + 1 : 0
        return ScreenLayout(
            title: ScreenRect(row: 0, column: 0, width: columns, height: min(1, rows)),
            sidebar: sidebarWidth > 0 ? ScreenRect(row: 1, column: 0, width: sidebarWidth, height: middleHeight) : nil,
            conversation: ScreenRect(row: 1, column: conversationColumn, width: columns - conversationColumn, height: middleHeight),
            status: ScreenRect(row: max(0, rows - inputHeight - 1), column: 0, width: columns, height: rows >= inputHeight + 2 ? 1 : 0),
            input: ScreenRect(row: rows - inputHeight, column: 0, width: columns, height: inputHeight)
        )
    }
}
