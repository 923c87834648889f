import GRDB
import GRDBSQLite
import RelayCore

/// Stored events read straight from SQLite, column by index: no `Row` (a copy of every value and a
/// name lookup per column), which made reading a replay of 10,000 events cost more than writing
/// its frames.
enum EventRows {
    /// The columns every query here selects, in this order; a query may add one integer column
    /// after them (read with `extra`).
    static let columns = "id, seq, user_id, conversation, role, content, created_at, device_id, attachments"
    private static let extraColumn: CInt = 9

    /// Runs `sql` (which selects `columns`) and hands each event to `body` until it returns false.
    static func forEach(
        _ db: Database,
        _ sql: String,
        _ arguments: StatementArguments,
        _ body: (ChatEvent, _ extra: Int64) throws -> Bool
    ) throws {
        try forEachRow(db, sql, arguments) { event, columns in
            try body(event, columns.count > extraColumn ? columns.int64(extraColumn) : 0)
        }
    }

    /// The columns of the current row past `columns`, for `forEachRow`.
    struct Columns {
        let handle: OpaquePointer

        var count: CInt { sqlite3_column_count(handle) }
        func int64(_ column: CInt) -> Int64 { sqlite3_column_int64(handle, column) }
        func text(_ column: CInt) -> String? { EventRows.text(handle, column) }
    }

    /// `forEach` for a query that selects more columns after `columns` (numbered from 9).
    static func forEachRow(
        _ db: Database,
        _ sql: String,
        _ arguments: StatementArguments,
        _ body: (ChatEvent, Columns) throws -> Bool
    ) throws {
        let statement = try db.cachedStatement(sql: sql)
        try statement.setArguments(arguments)
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: sql)
            }
            guard try body(event(handle), Columns(handle: handle)) else { return }
        }
    }

    /// The event of the current row.
    private static func event(_ handle: OpaquePointer) -> ChatEvent {
        let role = text(handle, 4) ?? ""
        return ChatEvent(
            id: text(handle, 0) ?? "",
            seq: sqlite3_column_int64(handle, 1),
            userID: text(handle, 2) ?? "",
            conversationID: text(handle, 3) ?? "",
            role: ChatRole(rawValue: role) ?? .assistant,
            content: text(handle, 5) ?? "",
            timestampMillis: sqlite3_column_int64(handle, 6),
            deviceID: text(handle, 7),
            attachmentsJSON: text(handle, 8),
            isNote: role == EventQueries.noteRole
        )
    }

    /// The first event `sql` selects.
    static func first(_ db: Database, _ sql: String, _ arguments: StatementArguments) throws -> ChatEvent? {
        var first: ChatEvent?
        try forEach(db, sql, arguments) { event, _ in
            first = event
            return false
        }
        return first
    }

    fileprivate static func text(_ handle: OpaquePointer, _ column: CInt) -> String? {
        guard let bytes = sqlite3_column_text(handle, column) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, column))), as: UTF8.self)
    }
}
