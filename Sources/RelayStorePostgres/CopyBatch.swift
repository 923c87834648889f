import GRDB
import PostgresNIO

/// A column of a table `SQLiteToPostgres` copies: its PostgreSQL name and type.
struct CopyColumn: Sendable {
    enum Kind: String, Sendable {
        case text, bigint, smallint, boolean
        case double = "double precision"
        /// A `timestamptz` sent as microseconds before the copying transaction's time: copied rows
        /// keep the order SQLite wrote them in, before anything written later.
        case microsecondsBeforeNow = "microseconds_before_now"

        /// The value's place in the `INSERT`, cast to the column's type.
        func placeholder(_ number: Int) -> String {
            self == .microsecondsBeforeNow ? "now() - $\(number)::bigint * interval '1 microsecond'" : "$\(number)::\(rawValue)"
        }
    }

    let name: String
    let kind: Kind

    /// `"id text, created_ms bigint"`: the columns of a spec, in the order its SELECT reads them.
    static func list(_ spec: String) -> [CopyColumn] {
        spec.split(separator: ",").map { part in
            let words = part.split(separator: " ", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            return CopyColumn(name: words[0], kind: Kind(rawValue: words[1]) ?? .text)
        }
    }
}

/// One value read from SQLite, typed for its PostgreSQL column.
enum CopyValue: Sendable {
    case text(String?)
    case integer(Int64?)
    case boolean(Bool?)
    case double(Double?)

    /// `value` as `column` wants it; a value SQLite holds in another type is converted when that
    /// is exact (an integer as text, a whole real as an integer), else refused with its place.
    init(_ value: DatabaseValue, for column: CopyColumn, table: String) throws {
        switch (column.kind, value.storage) {
        case (_, .null):
            self = Self.null(column.kind)
        case (.text, .string(let text)): self = .text(text)
        case (.text, .int64(let number)): self = .text(String(number))
        case (.text, .blob(let data)): self = .text(String(decoding: data, as: UTF8.self))
        case (.bigint, .int64(let number)), (.smallint, .int64(let number)), (.microsecondsBeforeNow, .int64(let number)): self = .integer(number)
        case (.bigint, .string(let text)), (.smallint, .string(let text)):
            guard let number = Int64(text) else { throw Self.refused(value, column, table) }
            self = .integer(number)
        case (.bigint, .double(let real)), (.smallint, .double(let real)):
            guard let number = Int64(exactly: real) else { throw Self.refused(value, column, table) }
            self = .integer(number)
        case (.boolean, .int64(let number)): self = .boolean(number != 0)
        case (.double, .double(let real)): self = .double(real)
        case (.double, .int64(let number)): self = .double(Double(number))
        default: throw Self.refused(value, column, table)
        }
    }

    private static func null(_ kind: CopyColumn.Kind) -> CopyValue {
        switch kind {
        case .text: .text(nil)
        case .bigint, .smallint, .microsecondsBeforeNow: .integer(nil)
        case .boolean: .boolean(nil)
        case .double: .double(nil)
        }
    }

    private static func refused(_ value: DatabaseValue, _ column: CopyColumn, _ table: String) -> PostgresStoreError {
        PostgresStoreError(code: .rejected, message: "\(table).\(column.name) holds \(value) in SQLite, which is no \(column.kind.rawValue)")
    }

    fileprivate func bind(_ bindings: inout PostgresBindings) {
        switch self {
        case .text(let text): text.map { bindings.append($0) } ?? bindings.appendNull()
        case .integer(let number): number.map { bindings.append($0) } ?? bindings.appendNull()
        case .boolean(let flag): flag.map { bindings.append($0) } ?? bindings.appendNull()
        case .double(let real): real.map { bindings.append($0) } ?? bindings.appendNull()
        }
    }
}

/// Rows of one table, sent as one multi-row `INSERT` (each value cast to its column's type, so a
/// NULL needs no type of its own).
struct CopyBatch {
    /// postgres-nio takes at most 65,535 bindings a statement; a batch stays well under.
    static let maxBindings = 30_000

    let table: String
    let columns: [CopyColumn]
    private(set) var rows: [[CopyValue]] = []

    init(table: String, columns: [CopyColumn]) {
        self.table = table
        self.columns = columns
    }

    var isFull: Bool { rows.count >= max(1, min(1_000, Self.maxBindings / max(1, columns.count))) }

    mutating func append(_ row: [CopyValue]) { rows.append(row) }

    /// The `INSERT` for the rows gathered so far (nil when none); the batch is empty after.
    mutating func take() -> PostgresQuery? {
        guard !rows.isEmpty else { return nil }
        var bindings = PostgresBindings(capacity: rows.count * columns.count)
        var sql = "INSERT INTO \(table) (\(columns.map(\.name).joined(separator: ", "))) VALUES "
        for (index, row) in rows.enumerated() {
            sql += index == 0 ? "(" : ", ("
            for (position, value) in row.enumerated() {
                value.bind(&bindings)
                sql += (position == 0 ? "" : ", ") + columns[position].kind.placeholder(bindings.count)
            }
            sql += ")"
        }
        rows.removeAll(keepingCapacity: true)
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }
}
