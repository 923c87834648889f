import GRDB
import GRDBSQLite
import RelayCore

/// The statements every relayed message runs, kept as raw SQLite handles and bound with
/// `sqlite3_bind_*`: no statement-cache lookup (hashing the SQL text), no `StatementArguments`
/// and no `Row` on the writer's hot path.
///
/// - Important: use it only on the connection it was made for, inside that connection's access
///   (the writer's batch, or the transaction of the caller that made it). It finalizes its
///   statements on deinit, so it must not outlive the connection. A statement is reset before a
///   call returns, so none is left running across a savepoint release or a commit.
final class WriterStatements {
    enum Key: Int, CaseIterable {
        case messageExists, seqLast, seqRecover, seqRaise, eventInsert, cursorAdvance, messageInsert, messageFinalize, queueDeviceUpsert
        case queueSourceInsert

        var sql: String {
            switch self {
            case .messageExists: "SELECT 1 FROM messages WHERE device_id = ? AND client_id = ?"
            case .seqLast: "SELECT last FROM user_seqs WHERE user_id = ?"
            case .seqRecover:
                // Each through an index: events' key, messages_user_event (the newest message's
                // answer slot, the seq after its user event), conversations_change, messages_ended.
                """
                SELECT MAX(
                    COALESCE((SELECT MAX(seq) FROM events WHERE user_id = ?1), 0),
                    COALESCE((SELECT m.answer_seq FROM messages m WHERE m.user_event_id =
                        (SELECT id FROM events WHERE user_id = ?1 AND role = 'user' ORDER BY seq DESC LIMIT 1)), 0),
                    (SELECT COALESCE(MAX(change_seq), 0) FROM conversations WHERE user_id = ?1),
                    (SELECT COALESCE(MAX(ended_seq), 0) FROM messages WHERE user_id = ?1 AND ended_seq IS NOT NULL))
                """
            case .seqRaise:
                """
                INSERT INTO user_seqs (user_id, last) VALUES (?1, ?2)
                ON CONFLICT (user_id) DO UPDATE SET last = ?2 WHERE ?2 > user_seqs.last
                """
            case .eventInsert:
                """
                INSERT INTO events (user_id, seq, id, conversation, role, content, device_id, attachments, created_at, queued_for, turn)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
            case .cursorAdvance:
                """
                INSERT INTO read_cursors (user_id, conversation_id, seq, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (user_id, conversation_id) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at
                WHERE excluded.seq > read_cursors.seq
                """
            case .messageInsert:
                """
                INSERT INTO messages (device_id, client_id, user_id, content_hash, attachments_hash, streaming,
                                      user_event_id, created_at, conversation_id, run_id, assistant_event_id, answer_seq)
                VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?)
                """
            case .messageFinalize: "UPDATE messages SET streaming = 0, assistant_event_id = ? WHERE device_id = ? AND client_id = ?"
            case .queueDeviceUpsert: "INSERT OR REPLACE INTO queue_devices (device_id, ttl_millis, capacity) VALUES (?, ?, ?)"
            case .queueSourceInsert:
                """
                INSERT INTO queue_sources (device_id, user_id, from_seq) VALUES (?1, ?2, ?3)
                ON CONFLICT (device_id, user_id) DO UPDATE SET from_seq = ?3 WHERE ?3 < queue_sources.from_seq
                """
            }
        }
    }

    let connection: OpaquePointer
    private var handles: [OpaquePointer?] = Array(repeating: nil, count: Key.allCases.count)

    /// A read cursor's row, as `cursorsWritten` names it.
    struct CursorKey: Hashable {
        let userID: String
        let conversationID: String
    }

    /// When these statements last wrote each read cursor on a send (`ReadCursorQueries.advanceOnSend`);
    /// entries older than the lag they serve are dropped as it grows.
    private(set) var cursorsWritten: [CursorKey: Int64] = [:]

    /// A device's queue in one user's log, as `queueSources` names it.
    struct QueueSource: Hashable {
        let deviceID: String
        let userID: String
    }

    /// Queue settings and floors these statements stored (`QueueQueries.note`): the writer's
    /// live as long as its connection, so a relayed message writes none of them again. A purge
    /// only raises floors, which a later item (at a higher seq) never needs lowered.
    var queueSettings: [String: QueueTarget] = [:]
    var queueSources: Set<QueueSource> = []

    func cursorKey(userID: String, conversationID: String) -> CursorKey { CursorKey(userID: userID, conversationID: conversationID) }

    func noteCursorWritten(_ key: CursorKey, at millis: Int64, keepingFor lag: Int64) {
        cursorsWritten[key] = millis
        if cursorsWritten.count > 4_096 { cursorsWritten = cursorsWritten.filter { millis - $0.value < lag } }
    }

    /// True for the store writer's own statements, which live as long as its connection and keep
    /// the users' seq clocks in `clocks` instead of writing them (`SeqQueries`).
    let keepsClocks: Bool
    var clocks: [String: Int64] = [:]

    init(_ db: Database, keepsClocks: Bool = false) {
        guard let connection = db.sqliteConnection else { preconditionFailure("WriterStatements on a closed connection") }
        self.connection = connection
        self.keepsClocks = keepsClocks
    }

    deinit {
        for handle in handles where handle != nil { sqlite3_finalize(handle) }
    }

    /// Rows changed by the last statement that ran on the connection.
    var changes: Int { Int(sqlite3_changes(connection)) }

    /// Binds with `bind`, then steps `key` to its end.
    func run(_ key: Key, _ bind: (RawBinder) -> Void) throws {
        let handle = try prepared(key)
        defer { sqlite3_reset(handle) }
        bind(RawBinder(handle: handle))
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW { code = sqlite3_step(handle) }
        guard code == SQLITE_DONE else { throw failure(code, key) }
    }

    /// Binds with `bind`, steps `key` to its end, and returns the first row's first column (nil without a row).
    func int64(_ key: Key, _ bind: (RawBinder) -> Void) throws -> Int64? {
        let handle = try prepared(key)
        defer { sqlite3_reset(handle) }
        bind(RawBinder(handle: handle))
        var code = sqlite3_step(handle)
        var value: Int64?
        if code == SQLITE_ROW { value = sqlite3_column_int64(handle, 0) }
        while code == SQLITE_ROW { code = sqlite3_step(handle) }
        guard code == SQLITE_DONE else { throw failure(code, key) }
        return value
    }

    private func prepared(_ key: Key) throws -> OpaquePointer {
        if let handle = handles[key.rawValue] { return handle }
        var handle: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, key.sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard code == SQLITE_OK, let handle else { throw failure(code, key) }
        handles[key.rawValue] = handle
        return handle
    }

    private func failure(_ code: CInt, _ key: Key) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: key.sql)
    }
}

/// Binds the parameters of one raw statement (1-based, as SQLite counts).
struct RawBinder {
    let handle: OpaquePointer

    func bind(_ index: CInt, _ value: Int64) {
        sqlite3_bind_int64(handle, index, value)
    }

    func bind(_ index: CInt, _ value: String?) {
        guard var value else {
            sqlite3_bind_null(handle, index)
            return
        }
        value.withUTF8 { bytes in
            if let start = bytes.baseAddress {
                let text = UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self)
                sqlite3_bind_text(handle, index, text, CInt(bytes.count), RawBinder.transient)
            } else {
                // SQLite reads a null pointer as NULL, so the empty string is bound from a literal.
                sqlite3_bind_text(handle, index, "", 0, RawBinder.transient)
            }
        }
    }

    /// SQLite copies the bytes before the bind returns (`SQLITE_TRANSIENT`).
    private static var transient: sqlite3_destructor_type { unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self) }
}
