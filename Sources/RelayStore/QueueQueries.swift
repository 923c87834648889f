import Foundation
import GRDB
import RelayCore

/// The per-device notification queues, read by cursor from the history (see `queueCursors`).
///
/// A device's queue is every item that names it in `queued_for`, in the logs of the users it
/// was queued from, at or after its floor there, not yet handed to it, younger than its time to
/// live, and among its newest `capacity`. Item ids are events' rowids, and minus the id of a
/// `queue_items` row.
public enum QueueQueries {
    /// How a queued item names its devices: each id between separators (`instr` finds one).
    static func deviceList(_ deviceIDs: some Sequence<String>) -> String {
        separator + deviceIDs.joined(separator: separator) + separator
    }

    static func needle(_ deviceID: String) -> String { separator + deviceID + separator }

    private static let separator = "\u{1F}"

    /// Queues `item` for `targets`: a stored event gets them in its own row, anything else a row
    /// of `queue_items`.
    public static func enqueue(_ db: Database, _ item: QueueItem, targets: [QueueTarget], at millis: Int64) throws {
        guard !targets.isEmpty else { return }
        let statements = WriterStatements(db)
        let seq: Int64
        if case .message(let event) = item, let row = try db.row("SELECT rowid, seq, queued_for FROM events WHERE id = ?", [event.id]) {
            let named = Set(((row["queued_for"] as String?) ?? "").split(separator: Character(separator)).map(String.init))
            try db.run(
                "UPDATE events SET queued_for = ?, turn = COALESCE(turn, ?) WHERE rowid = ?",
                [deviceList(named.union(targets.map(\.deviceID)).sorted()), event.turn.map(TurnCodec.encode), row["rowid"] as Int64]
            )
            seq = row["seq"]
        } else {
            seq = try SeqQueries.current(statements, userID: userID(of: item))
            try db.run(
                "INSERT INTO queue_items (user_id, seq, conversation_id, item, queued_for, queued_at) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    userID(of: item), seq, item.conversationID, String(decoding: try JSONEncoder().encode(item), as: UTF8.self),
                    deviceList(targets.map(\.deviceID)), millis,
                ]
            )
        }
        // An item behind a floor a purge moved is brought back into view.
        try note(targets, userID: userID(of: item), seq: seq, statements: statements, lowering: true)
    }

    /// Records what a queue needs beyond the item's own row: each target's time to live and
    /// capacity, and its floor in the user's log. The writer's statements remember what they
    /// wrote, so a relayed message normally writes nothing here.
    static func note(_ targets: [QueueTarget], userID: String, seq: Int64, statements: WriterStatements, lowering: Bool = false) throws {
        for target in targets {
            if statements.queueSettings[target.deviceID] != target {
                try statements.run(.queueDeviceUpsert) {
                    $0.bind(1, target.deviceID)
                    $0.bind(2, target.ttlMillis)
                    $0.bind(3, Int64(target.capacity))
                }
                statements.queueSettings[target.deviceID] = target
            }
            let source = WriterStatements.QueueSource(deviceID: target.deviceID, userID: userID)
            if lowering || !statements.queueSources.contains(source) {
                try statements.run(.queueSourceInsert) {
                    $0.bind(1, target.deviceID)
                    $0.bind(2, userID)
                    $0.bind(3, seq)
                }
                statements.queueSources.insert(source)
            }
        }
    }

    /// A device's unexpired entries, oldest first (at most `limit`), only those of `conversations` when given.
    public static func pending(
        _ db: Database,
        deviceID: String,
        conversations: Set<String>? = nil,
        at millis: Int64,
        limit: Int = 10_000
    ) throws -> [QueuedEvent] {
        if let conversations, conversations.isEmpty { return [] }
        let all = try QueueScan(db, deviceID: deviceID, at: millis).pending
        let wanted = conversations.map { wanted in all.filter { wanted.contains($0.item.conversationID) } } ?? all
        return Array(wanted.prefix(limit))
    }

    /// Marks entries handed to the device: one row each, in one transaction per delivery.
    public static func delete(_ db: Database, deviceID: String, ids: [Int64]) throws {
        for id in ids {
            let place =
                id > 0
                ? try db.row("SELECT user_id, seq FROM events WHERE rowid = ?", [id])
                : try db.row("SELECT user_id, seq FROM queue_items WHERE id = ?", [-id])
            guard let place else { continue }
            try db.run(
                "INSERT OR IGNORE INTO queue_delivered (device_id, item_id, user_id, seq) VALUES (?, ?, ?, ?)",
                [deviceID, id, place["user_id"] as String, place["seq"] as Int64]
            )
        }
    }

    /// Moves every queue's floor past what it no longer holds (handed out, expired or dropped past
    /// capacity), forgets the deliveries and side items behind every floor, and returns how many
    /// entries expired or were dropped since the last purge.
    public static func purge(_ db: Database, at millis: Int64) throws -> Int {
        var gone = 0
        for deviceID in try String.fetchAll(db, sql: "SELECT device_id FROM queue_devices") {
            let scan = try QueueScan(db, deviceID: deviceID, at: millis)
            gone += scan.dropped
            for (userID, floor) in scan.floors {
                try db.run(
                    "UPDATE queue_sources SET from_seq = ? WHERE device_id = ? AND user_id = ? AND from_seq < ?",
                    [floor, deviceID, userID, floor]
                )
                try db.run("DELETE FROM queue_delivered WHERE device_id = ? AND user_id = ? AND seq < ?", [deviceID, userID, floor])
            }
        }
        try db.run(
            """
            DELETE FROM queue_items WHERE NOT EXISTS (
                SELECT 1 FROM queue_sources s WHERE s.user_id = queue_items.user_id AND s.from_seq <= queue_items.seq
                    AND instr(queue_items.queued_for, char(31) || s.device_id || char(31)) > 0)
            """
        )
        return gone
    }

    /// Entries per device, for `clawrelay devices list`.
    public static func depths(_ db: Database, at millis: Int64) throws -> [String: Int] {
        var depths: [String: Int] = [:]
        for deviceID in try String.fetchAll(db, sql: "SELECT device_id FROM queue_devices") {
            let count = try QueueScan(db, deviceID: deviceID, at: millis).pending.count
            if count > 0 { depths[deviceID] = count }
        }
        return depths
    }

    static func userID(of item: QueueItem) -> String {
        switch item {
        case .message(let event): event.userID
        case .failure(let failure): failure.userID
        }
    }
}

/// A turn in one column: the lengths of the run and device ids, then the three ids.
enum TurnCodec {
    static func encode(_ turn: TurnRef) -> String {
        "\(turn.runID.utf8.count):\(turn.deviceID.utf8.count):\(turn.runID)\(turn.deviceID)\(turn.clientID)"
    }

    static func decode(_ text: String) -> TurnRef? {
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let runLength = Int(parts[0]), let deviceLength = Int(parts[1]) else { return nil }
        let rest = Array(parts[2].utf8)
        guard runLength >= 0, deviceLength >= 0, runLength + deviceLength <= rest.count else { return nil }
        return TurnRef(
            runID: String(decoding: rest[..<runLength], as: UTF8.self),
            deviceID: String(decoding: rest[runLength..<(runLength + deviceLength)], as: UTF8.self),
            clientID: String(decoding: rest[(runLength + deviceLength)...], as: UTF8.self)
        )
    }
}
