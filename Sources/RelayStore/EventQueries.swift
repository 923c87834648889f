import GRDB
import RelayCore

/// The per-user event log.
public enum EventQueries {
    /// The role column of the relay's notes (read back as assistant events with `isNote`).
    static let noteRole = "note"

    /// Stores an event at `seq` of the user's clock, or at the clock's next seq when `seq` is nil
    /// (a caller that takes several seqs at once passes one it took).
    public static func append(
        _ db: Database,
        userID: String,
        conversationID: String,
        role: ChatRole,
        content: String,
        deviceID: String?,
        attachmentsJSON: String?,
        at millis: Int64,
        id: String = Identifiers.newEventID(),
        seq taken: Int64? = nil
    ) throws -> ChatEvent {
        let statements = WriterStatements(db)
        return try append(
            statements,
            userID: userID,
            conversationID: conversationID,
            role: role,
            content: content,
            deviceID: deviceID,
            attachmentsJSON: attachmentsJSON,
            at: millis,
            id: id,
            seq: try taken ?? SeqQueries.next(statements, userID: userID)
        )
    }

    /// `append` through the writer's raw statements (the writer's own, or ones made for the caller's
    /// connection), at a seq the caller took.
    static func append(
        _ statements: WriterStatements,
        userID: String,
        conversationID: String,
        role: ChatRole,
        content: String,
        deviceID: String?,
        attachmentsJSON: String?,
        at millis: Int64,
        id: String,
        seq: Int64,
        isNote: Bool = false,
        turn: TurnRef? = nil,
        queue: [QueueTarget] = []
    ) throws -> ChatEvent {
        try statements.run(.eventInsert) {
            $0.bind(1, userID)
            $0.bind(2, seq)
            $0.bind(3, id)
            $0.bind(4, conversationID)
            $0.bind(5, isNote ? noteRole : role.rawValue)
            $0.bind(6, content)
            $0.bind(7, deviceID)
            $0.bind(8, attachmentsJSON)
            $0.bind(9, millis)
            $0.bind(10, queue.isEmpty ? nil : QueueQueries.deviceList(queue.map(\.deviceID)))
            $0.bind(11, queue.isEmpty ? nil : turn.map(TurnCodec.encode))
        }
        try QueueQueries.note(queue, userID: userID, seq: seq, statements: statements)
        return ChatEvent(
            id: id,
            seq: seq,
            userID: userID,
            conversationID: conversationID,
            role: role,
            content: content,
            timestampMillis: millis,
            deviceID: deviceID,
            attachmentsJSON: attachmentsJSON,
            turn: turn,
            isNote: isNote
        )
    }

    public static func fetch(_ db: Database, id: String) throws -> ChatEvent? {
        try EventRows.first(db, "SELECT \(EventRows.columns) FROM events WHERE id = ?", [id])
    }

    /// The events after `cursor` (an event id) in the histories of `audiences` (a user, plus the
    /// shared audiences its device hears), in the order they were stored, oldest first; at most
    /// `limit` (the newest ones). Each audience numbers its own events, so the histories are
    /// merged in insertion order (rowid; events are never deleted) and the cursor, whichever
    /// history it is in, marks the same point in all of them.
    public static func replay(_ db: Database, audiences: [String], after cursor: String?, limit: Int) throws -> ReplayWindow {
        var highWater: [String: Int64] = [:]
        for audience in audiences {
            highWater[audience] = try db.value(Int64.self, "SELECT MAX(seq) FROM events WHERE user_id = ?", [audience]) ?? 0
        }
        var afterSeq: [String: Int64] = [:]
        var historyReset = true
        if let cursor, let row = try db.row("SELECT rowid AS r, user_id, seq FROM events WHERE id = ?", [cursor]),
            audiences.contains(row["user_id"] as String)
        {
            historyReset = false
            let point: Int64 = row["r"]
            for audience in audiences {
                afterSeq[audience] =
                    try db.value(Int64.self, "SELECT seq FROM events WHERE user_id = ? AND rowid <= ? ORDER BY seq DESC LIMIT 1", [audience, point])
                    ?? 0
            }
        }
        // A user's seqs have gaps (conversation changes and answer slots share the clock), so
        // truncation is found by reading one row more than fits, not from seq arithmetic.
        var rows: [(rowid: Int64, event: ChatEvent)] = []
        for audience in audiences {
            try EventRows.forEach(
                db,
                "SELECT \(EventRows.columns), rowid FROM events WHERE user_id = ? AND seq > ? ORDER BY seq DESC LIMIT ?",
                [audience, afterSeq[audience] ?? 0, limit + 1]
            ) { event, rowid in
                rows.append((rowid, event))
                return true
            }
        }
        rows.sort { $0.rowid < $1.rowid }
        return ReplayWindow(events: rows.suffix(limit).map(\.event), truncated: rows.count > limit, historyReset: historyReset, highWater: highWater)
    }

    /// True when an event of `audience` carries the asset (so its devices may download it).
    public static func mentions(_ db: Database, assetID: String, audience: String) throws -> Bool {
        let needle = JSONValue.object(["assetId": .string(assetID)]).encoded().dropFirst().dropLast()
        return try db.value(
            Bool.self,
            "SELECT EXISTS (SELECT 1 FROM events WHERE user_id = ? AND attachments IS NOT NULL AND instr(attachments, ?) > 0)",
            [audience, String(needle)]
        ) ?? false
    }

    /// The last `limit` events of one conversation that fit in about `byteBudget` bytes of content
    /// (always the newest one), oldest first.
    public static func conversation(
        _ db: Database,
        userID: String,
        conversationID: String,
        limit: Int,
        byteBudget: Int = .max
    ) throws
        -> [ChatEvent]
    {
        try recent(db, userID: userID, conversationID: conversationID, skipping: 0, limit: limit, byteBudget: byteBudget).events
    }

    /// `conversation`, after skipping the newest `skipping`, and whether older events were left out.
    public static func recent(
        _ db: Database,
        userID: String,
        conversationID: String,
        skipping: Int,
        limit: Int,
        byteBudget: Int
    ) throws -> RecentEvents {
        var newest: [ChatEvent] = []
        var bytes = 0
        var cut = false
        try EventRows.forEach(
            db,
            "SELECT \(EventRows.columns) FROM events WHERE user_id = ? AND conversation = ? ORDER BY seq DESC LIMIT ? OFFSET ?",
            [userID, conversationID, limit + 1, skipping]
        ) { event, _ in
            bytes += event.content.utf8.count + (event.attachmentsJSON?.utf8.count ?? 0)
            guard newest.count < limit, newest.isEmpty || bytes <= byteBudget else {
                cut = true
                return false
            }
            newest.append(event)
            return true
        }
        return RecentEvents(events: newest.reversed(), hasMore: cut)
    }

    /// One event by its id.
    public static func event(_ db: Database, id: String) throws -> ChatEvent? {
        try EventRows.first(db, "SELECT \(EventRows.columns) FROM events WHERE id = ?", [id])
    }

    /// The newest stored event of a conversation.
    public static func last(_ db: Database, conversationID: String) throws -> ChatEvent? {
        try EventRows.first(db, "SELECT \(EventRows.columns) FROM events WHERE conversation = ? ORDER BY seq DESC LIMIT 1", [conversationID])
    }

    /// How many events a conversation holds.
    public static func count(_ db: Database, conversationID: String) throws -> Int {
        try db.value(Int.self, "SELECT COUNT(*) FROM events WHERE conversation = ?", [conversationID]) ?? 0
    }
}
