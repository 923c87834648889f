import Logging
import PostgresNIO
import RelayCore

/// The log's message events (`events.kind` 0) read back as `ChatEvent`s, as SQLite's
/// `EventQueries`: a stream is SQLite's user, role 2 an assistant note, and `turn` is nil (read
/// back from history). A failed turn (kind 1) is no event here, as in SQLite.
enum PostgresEventQueries {
    /// What every event read selects (from `events e`), in `EventRow`'s order.
    static let columns = "e.id, e.seq, e.stream_id, e.conversation_id, e.role, e.content, e.created_ms, e.device_id, e.attachments"

    typealias EventRow = (String, Int64, String, String, Int16?, String?, Int64, String?, String?)

    static func event(_ row: EventRow) -> ChatEvent {
        let (id, seq, stream, conversation, role, content, createdAt, device, attachments) = row
        return ChatEvent(
            id: id,
            seq: seq,
            userID: stream,
            conversationID: conversation,
            role: role == 0 ? .user : .assistant,
            content: content ?? "",
            timestampMillis: createdAt,
            deviceID: device,
            attachmentsJSON: attachments,
            isNote: role == 2
        )
    }

    /// The events of rows that select `columns`.
    static func events(_ rows: PostgresRowSequence) async throws -> [ChatEvent] {
        var events: [ChatEvent] = []
        for try await row in rows.decode(EventRow.self) { events.append(event(row)) }
        return events
    }

    /// One event by its id.
    static func event(_ connection: PostgresConnection, _ logger: Logger, id: String) async throws -> ChatEvent? {
        try await events(connection.query("SELECT \(unescaped: columns) FROM events e WHERE e.id = \(id) AND e.kind = 0", logger: logger)).first
    }

    /// The newest event of a conversation.
    static func last(_ connection: PostgresConnection, _ logger: Logger, conversationID: String) async throws -> ChatEvent? {
        try await events(
            connection.query(
                "SELECT \(unescaped: columns) FROM events e WHERE e.conversation_id = \(conversationID) AND e.kind = 0 ORDER BY e.seq DESC LIMIT 1",
                logger: logger
            )
        )
        .first
    }

    /// The newest event of each of the given conversations that has one.
    static func lastEvents(_ connection: PostgresConnection, _ logger: Logger, conversationIDs: [String]) async throws -> [String: ChatEvent] {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: columns) FROM unnest(\(conversationIDs)::text[]) AS ids(id) CROSS JOIN LATERAL (
              SELECT * FROM events WHERE conversation_id = ids.id AND kind = 0 ORDER BY seq DESC LIMIT 1) e
            """,
            logger: logger
        )
        var last: [String: ChatEvent] = [:]
        for event in try await events(rows) { last[event.conversationID] = event }
        return last
    }

    /// How many events a conversation holds.
    static func count(_ connection: PostgresConnection, _ logger: Logger, conversationID: String) async throws -> Int {
        let rows = try await connection.query("SELECT count(*) FROM events WHERE conversation_id = \(conversationID) AND kind = 0", logger: logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    /// The last `limit` events of the user's conversation after skipping the newest `skipping`,
    /// that fit in about `byteBudget` bytes of content and attachments (always the newest one),
    /// oldest first; `hasMore` when older ones were left out.
    static func recent(
        _ connection: PostgresConnection,
        _ logger: Logger,
        userID: String,
        conversationID: String,
        skipping: Int,
        limit: Int,
        byteBudget: Int
    ) async throws -> RecentEvents {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: columns) FROM events e WHERE e.stream_id = \(userID) AND e.conversation_id = \(conversationID) AND e.kind = 0
            ORDER BY e.seq DESC LIMIT \(limit + 1) OFFSET \(skipping)
            """,
            logger: logger
        )
        var newest: [ChatEvent] = []
        var bytes = 0
        var cut = false
        for event in try await events(rows) {
            bytes += event.content.utf8.count + (event.attachmentsJSON?.utf8.count ?? 0)
            guard newest.count < limit, newest.isEmpty || bytes <= byteBudget else {
                cut = true
                break
            }
            newest.append(event)
        }
        return RecentEvents(events: newest.reversed(), hasMore: cut)
    }

    /// True when an event of `audience` carries the asset in its attachments (an object whose
    /// `assetId` is it, at any depth), so its devices may download it.
    static func mentions(_ connection: PostgresConnection, _ logger: Logger, assetID: String, audience: String) async throws -> Bool {
        let rows = try await connection.query(
            """
            SELECT EXISTS (SELECT 1 FROM events WHERE stream_id = \(audience) AND kind = 0 AND attachments IS NOT NULL
              AND strpos(attachments, \(assetID)) > 0
              AND jsonb_path_exists(attachments::jsonb, '$.** ? (@.assetId == $id)', jsonb_build_object('id', \(assetID)::text)))
            """,
            logger: logger
        )
        for try await found in rows.decode(Bool.self) { return found }
        return false
    }

    /// The message a device sent under `clientID`, with its user event; nil when either is gone.
    static func message(_ connection: PostgresConnection, _ logger: Logger, deviceID: String, clientID: String) async throws -> StoredMessage? {
        let rows = try await connection.query(
            """
            SELECT content_hash, attachments_hash, state, user_event_id, answer_event_id, run_id, reason, answer_seq, stream_id, conversation_id
            FROM messages WHERE device_id = \(deviceID) AND client_id = \(clientID)
            """,
            logger: logger
        )
        var record: MessageRecord?
        for try await row in rows.decode((String, String, Int16, String, String?, String, String?, Int64?, String, String).self) {
            let (contentHash, attachmentsHash, state, userEventID, answerEventID, runID, reason, answerSeq, stream, conversation) = row
            record = MessageRecord(
                deviceID: deviceID,
                clientID: clientID,
                contentHash: contentHash,
                attachmentsHash: attachmentsHash,
                state: MessageState(rawValue: Int(state)) ?? .failed,
                userEventID: userEventID,
                assistantEventID: answerEventID,
                runID: runID,
                reason: reason,
                answerSeq: answerSeq,
                userID: stream,
                conversationID: conversation
            )
        }
        guard let record, let eventID = record.userEventID, let event = try await event(connection, logger, id: eventID) else { return nil }
        return StoredMessage(record: record, event: event)
    }
}
