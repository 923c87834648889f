import GRDB
import GRDBSQLite
import RelayCore

/// One audit row through a prepared `INSERT`, bound with `sqlite3_bind_*` directly.
///
/// GRDB's `StatementArguments` boxes every value (about a fifth of the audit writer's CPU); the
/// audit writes the same ten columns for every frame, so it binds them itself.
/// - Important: use only inside the write transaction that prepared `statement`.
struct AuditInsert {
    let db: Database
    let statement: SQLiteStatement

    /// `SQLITE_TRANSIENT`: SQLite copies the bytes into the statement's own (reused) buffer.
    private static var transient: sqlite3_destructor_type { unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self) }

    /// Inserts `entry` with `body` (raw, unredacted) redacted and cut to `maxBodyBytes`.
    func run(_ entry: AuditEntry, body: [UInt8], maxBodyBytes: Int) throws {
        sqlite3_bind_int64(statement, 1, entry.timeMillis)
        sqlite3_bind_int64(statement, 2, Int64(truncatingIfNeeded: entry.connectionID))
        bind(3, entry.protocolName)
        bind(4, entry.direction)
        bind(5, entry.kind)
        bind(6, entry.deviceID)
        bind(7, entry.userID)
        bind(8, entry.opcode)
        sqlite3_bind_int64(statement, 9, Int64(entry.size))
        let verbatim =
            body.count <= maxBodyBytes
            && body.withUnsafeBufferPointer { bytes in Self.isASCII(bytes) && !Redactor.mightHoldSecret(bytes) }
        if verbatim {
            // ASCII with no secret word: `Redactor.redact` would return these very bytes.
            body.withUnsafeBufferPointer { bindBytes(10, $0) }
        } else {
            let cut = body.count > maxBodyBytes ? Array(body.prefix(maxBodyBytes)) : body
            bind(10, Redactor.redact(cut) + (body.count > maxBodyBytes ? "…(\(body.count) bytes)" : ""))
        }
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

    /// Binds UTF-8 bytes as TEXT; an empty buffer is the empty string, never NULL.
    private func bindBytes(_ index: Int32, _ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            sqlite3_bind_text(statement, index, "", 0, nil)
            return
        }
        base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
            _ = sqlite3_bind_text(statement, index, $0, Int32(bytes.count), Self.transient)
        }
    }

    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var bits: UInt8 = 0
        for byte in bytes { bits |= byte }
        return bits & 0x80 == 0
    }
}
