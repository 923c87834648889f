import GRDB
import RelayCore

/// The record of one client message, keyed by device and client id, created at receipt.
public struct MessageRecord: Sendable, Equatable {
    /// `messages.streaming`: the states the Clawline test list names.
    public enum State: Int, Sendable {
        case finalized = 0
        case active = 1
        case failed = 2
    }

    public var deviceID: String
    public var clientID: String
    public var contentHash: String
    public var attachmentsHash: String
    public var state: State
    public var ackSent: Bool
    public var userEventID: String?
    public var assistantEventID: String?
}

/// What accepting a client message found.
public enum MessageAcceptance: Sendable, Equatable {
    /// A new record and its user echo event.
    case fresh(ChatEvent)
    /// The same id was seen before with the same content.
    case duplicate(MessageRecord)
    /// The same id was seen before with other content.
    case mismatch
}

public enum MessageQueries {
    /// Creates the record and the user echo atomically, or reports the existing record.
    public static func accept(
        _ db: Database, deviceID: String, clientID: String, userID: String, conversationID: String, content: String,
        contentHash: String, attachmentsHash: String, attachmentsJSON: String?, at millis: Int64
    ) throws -> MessageAcceptance {
        if let existing = try fetch(db, deviceID: deviceID, clientID: clientID) {
            guard existing.contentHash == contentHash, existing.attachmentsHash == attachmentsHash else { return .mismatch }
            return .duplicate(existing)
        }
        let event = try EventQueries.append(
            db, userID: userID, conversationID: conversationID, role: .user, content: content, deviceID: deviceID,
            attachmentsJSON: attachmentsJSON, at: millis)
        try db.run("""
                INSERT INTO messages (device_id, client_id, user_id, content_hash, attachments_hash, streaming, ack_sent,
                                      user_event_id, created_at)
                VALUES (?, ?, ?, ?, ?, 1, 0, ?, ?)
                """,
            [deviceID, clientID, userID, contentHash, attachmentsHash, event.id, millis])
        return .fresh(event)
    }

    public static func fetch(_ db: Database, deviceID: String, clientID: String) throws -> MessageRecord? {
        guard let row = try db.row("SELECT * FROM messages WHERE device_id = ? AND client_id = ?", [deviceID, clientID])
        else { return nil }
        return MessageRecord(
            deviceID: row["device_id"], clientID: row["client_id"], contentHash: row["content_hash"],
            attachmentsHash: row["attachments_hash"], state: MessageRecord.State(rawValue: row["streaming"]) ?? .failed,
            ackSent: row["ack_sent"], userEventID: row["user_event_id"], assistantEventID: row["assistant_event_id"])
    }

    public struct AckKey: Sendable {
        public var deviceID: String
        public var clientID: String
        public init(deviceID: String, clientID: String) {
            self.deviceID = deviceID
            self.clientID = clientID
        }
    }

    public static func markAckSent(_ db: Database, _ keys: [AckKey]) throws {
        for key in keys {
            try db.run("UPDATE messages SET ack_sent = 1 WHERE device_id = ? AND client_id = ?", [key.deviceID, key.clientID])
        }
    }

    public static func setState(_ db: Database, deviceID: String, clientID: String, _ state: MessageRecord.State) throws {
        try db.run("UPDATE messages SET streaming = ? WHERE device_id = ? AND client_id = ?", [state.rawValue, deviceID, clientID])
    }

    /// Persists the assistant's final answer and finalizes the record in one step.
    public static func finalize(
        _ db: Database, deviceID: String, clientID: String, userID: String, conversationID: String, eventID: String, content: String,
        at millis: Int64
    ) throws -> ChatEvent {
        let event = try EventQueries.append(
            db, userID: userID, conversationID: conversationID, role: .assistant, content: content, deviceID: nil, attachmentsJSON: nil,
            at: millis, id: eventID)
        try db.run("UPDATE messages SET streaming = 0, assistant_event_id = ? WHERE device_id = ? AND client_id = ?",
            [eventID, deviceID, clientID])
        return event
    }

    /// Streams cannot survive a restart: every active record becomes failed.
    public static func failActive(_ db: Database) throws -> Int {
        try db.run("UPDATE messages SET streaming = 2 WHERE streaming = 1")
        return db.changesCount
    }
}
