import Foundation

/// A table for the terminal: a header and rows, each column as wide as its widest cell, two
/// spaces between columns (`devices list`, `conversations list`).
enum TextTable {
    static func lines(header: [String], rows: [[String]]) -> [String] {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { line in
            line.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
    }

    static func print(header: [String], rows: [[String]]) {
        for line in lines(header: header, rows: rows) { Swift.print(line) }
    }
}
