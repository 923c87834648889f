import Foundation
import GRDB
import RelayCore

/// One device's queue read from the logs it was queued from (`QueueQueries`): what it still
/// holds, what expired or fell past its capacity, and how far each floor may move.
struct QueueScan {
    /// The queue, oldest first.
    private(set) var pending: [QueuedEvent] = []
    /// Entries neither handed out nor kept: expired, or the oldest past the capacity.
    private(set) var dropped = 0
    /// Per user log: the seq before which the device holds nothing any more.
    private(set) var floors: [String: Int64] = [:]

    private struct Candidate {
        let entry: QueuedEvent
        let userID: String
        let seq: Int64
        let source: Int
    }

    init(_ db: Database, deviceID: String, at millis: Int64) throws {
        guard let settings = try db.row("SELECT ttl_millis, capacity FROM queue_devices WHERE device_id = ?", [deviceID]) else { return }
        let (ttl, capacity): (Int64, Int) = (settings["ttl_millis"], settings["capacity"])
        let needle = QueueQueries.needle(deviceID)
        let delivered = Set(try Int64.fetchAll(db, sql: "SELECT item_id FROM queue_delivered WHERE device_id = ?", arguments: [deviceID]))
        let sources = try Row.fetchAll(
            db,
            sql: "SELECT user_id, from_seq FROM queue_sources WHERE device_id = ? ORDER BY user_id",
            arguments: [deviceID]
        )
        var live: [Candidate] = []
        var newest: [String: Int64] = [:]
        for (index, source) in sources.enumerated() {
            let (userID, from): (String, Int64) = (source["user_id"], source["from_seq"])
            var found: [Candidate] = []
            try EventRows.forEachRow(
                db,
                "SELECT \(EventRows.columns), rowid, turn FROM events WHERE user_id = ? AND seq >= ? AND instr(queued_for, ?) > 0 ORDER BY seq",
                [userID, from, needle]
            ) { event, columns in
                var event = event
                event.turn = columns.text(10).flatMap(TurnCodec.decode)
                let entry = QueuedEvent(id: columns.int64(9), item: .message(event), queuedAt: event.timestampMillis)
                found.append(Candidate(entry: entry, userID: userID, seq: event.seq, source: index))
                return true
            }
            let decoder = JSONDecoder()
            for row in try Row.fetchAll(
                db,
                sql: "SELECT id, seq, item, queued_at FROM queue_items WHERE user_id = ? AND seq >= ? AND instr(queued_for, ?) > 0 ORDER BY seq, id",
                arguments: [userID, from, needle]
            ) {
                guard let item = try? decoder.decode(QueueItem.self, from: Data((row["item"] as String).utf8)) else { continue }
                let entry = QueuedEvent(id: -(row["id"] as Int64), item: item, queuedAt: row["queued_at"])
                found.append(Candidate(entry: entry, userID: userID, seq: row["seq"], source: index))
            }
            // Events before side items of the same seq (an item takes the seq the clock was at).
            found.sort { ($0.seq, $0.entry.id < 0 ? 1 : 0, abs($0.entry.id)) < ($1.seq, $1.entry.id < 0 ? 1 : 0, abs($1.entry.id)) }
            if let last = found.last { newest[userID] = last.seq }
            for candidate in found where candidate.entry.queuedAt + ttl > millis || delivered.contains(candidate.entry.id) {
                live.append(candidate)
            }
            dropped += found.count - live.count(where: { $0.userID == userID })
        }
        if sources.count > 1 {
            live = live.enumerated().sorted { ($0.element.entry.queuedAt, $0.offset) < ($1.element.entry.queuedAt, $1.offset) }.map(\.element)
        }
        // The capacity counts what was handed out too, as a queue that dropped its oldest entry
        // on each one past it would hold: a delivery frees no room for entries dropped before.
        let cut = max(0, live.count - max(0, capacity))
        dropped += live.prefix(cut).count { !delivered.contains($0.entry.id) }
        let kept = live.dropFirst(cut).filter { !delivered.contains($0.entry.id) }
        pending = kept.map(\.entry)
        for (userID, seq) in newest { floors[userID] = seq + 1 }
        for candidate in kept { floors[candidate.userID] = min(floors[candidate.userID] ?? .max, candidate.seq) }
    }
}
