import Foundation
import GRDB
import GRDBSQLite
import RelayCore

/// Audit rows through a prepared multi-row `INSERT`, bound with `sqlite3_bind_*` directly.
///
/// GRDB's `StatementArguments` boxes every value (about a fifth of the audit writer's CPU), and
/// each executed statement opens and closes its cursors and allocates; the audit writes the same
/// ten columns for every frame, so it binds them itself, `rows` rows per statement.
/// - Important: use only inside the write transaction that prepared `statement`.
struct AuditInsert {
    static let columns: Int32 = 10
    /// Rows per statement for full chunks of a batch (320 parameters, under every SQLite's limit).
    static let chunk = 32

    /// `INSERT` of `rows` rows, in order (row ids follow the batch's order).
    static func sql(rows: Int) -> String {
        let row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        return "INSERT INTO audit (time, connection, protocol, direction, kind, device_id, user_id, opcode, size, body) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    let db: Database
    let statement: SQLiteStatement

    /// `SQLITE_TRANSIENT`: SQLite copies the bytes into the statement's own (reused) buffer.
    private static var transient: sqlite3_destructor_type { unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self) }

    /// Binds `entry` as row `row` of the statement, with `body` (raw, unredacted) redacted and cut to `maxBodyBytes`.
    func bind(_ entry: AuditEntry, body: [UInt8], row: Int, maxBodyBytes: Int) {
        let base = Int32(row) * Self.columns
        sqlite3_bind_int64(statement, base + 1, entry.timeMillis)
        sqlite3_bind_int64(statement, base + 2, Int64(truncatingIfNeeded: entry.connectionID))
        bind(base + 3, entry.protocolName)
        bind(base + 4, entry.direction)
        bind(base + 5, entry.kind)
        bind(base + 6, entry.deviceID)
        bind(base + 7, entry.userID)
        bind(base + 8, entry.opcode)
        sqlite3_bind_int64(statement, base + 9, Int64(entry.size))
        let verbatim =
            body.count <= maxBodyBytes
            && body.withUnsafeBufferPointer { bytes in Self.isASCII(bytes) && !Redactor.mightHoldSecret(bytes) }
        if verbatim {
            // ASCII with no secret word: `Redactor.redact` would return these very bytes.
            body.withUnsafeBufferPointer { bindBytes(base + 10, $0) }
        } else {
            let cut = body.count > maxBodyBytes ? Array(body.prefix(maxBodyBytes)) : body
            bind(base + 10, Redactor.redact(cut) + (body.count > maxBodyBytes ? "…(\(body.count) bytes)" : ""))
        }
    }

    /// Runs the statement with what is bound, then resets it for the next rows.
    func step() throws {
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }

    private func bind(_ index: Int32, _ text: String?) {
        guard var text else {
            sqlite3_bind_null(statement, index)
            return
        }
        text.withUTF8 { bindBytes(index, $0) }
    }

    /// Binds UTF-8 bytes as TEXT up to the first NUL, as GRDB binds a `String` (length -1), so rows
    /// read the same as before; an empty buffer is the empty string, never NULL.
    private func bindBytes(_ index: Int32, _ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            sqlite3_bind_text(statement, index, "", 0, nil)
            return
        }
        let length = memchr(base, 0, bytes.count).map { base.distance(to: $0.assumingMemoryBound(to: UInt8.self)) } ?? bytes.count
        base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
            _ = sqlite3_bind_text(statement, index, $0, Int32(length), Self.transient)
        }
    }

    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var bits: UInt8 = 0
        for byte in bytes { bits |= byte }
        return bits & 0x80 == 0
    }
}
