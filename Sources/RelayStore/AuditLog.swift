import Foundation
import GRDB
import GRDBSQLite
import RelayCore
import Synchronization

/// One audited frame or HTTP message. `body` is raw until the writer redacts it.
public struct AuditEntry: Sendable, Equatable {
    public var id: Int64 = 0
    public var timeMillis: Int64
    public var connectionID: UInt64
    public var protocolName: String
    public var direction: String
    public var kind: String
    public var deviceID: String?
    public var userID: String?
    public var opcode: String
    public var size: Int
    public var body: String

    public init(
        timeMillis: Int64,
        connectionID: UInt64,
        protocolName: String,
        direction: String,
        kind: String,
        deviceID: String?,
        userID: String?,
        opcode: String,
        size: Int,
        body: String
    ) {
        self.timeMillis = timeMillis
        self.connectionID = connectionID
        self.protocolName = protocolName
        self.direction = direction
        self.kind = kind
        self.deviceID = deviceID
        self.userID = userID
        self.opcode = opcode
        self.size = size
        self.body = body
    }
}

/// The audit table in its own SQLite file, written in batches by its own thread.
///
/// `append` only takes a lock and appends; redaction and SQL happen on the writer thread, so the
/// service thread never waits for the audit.
public final class AuditLog: Sendable {
    private struct Pending {
        var entry: AuditEntry
        var raw: [UInt8]
    }

    private struct State {
        var buffer: [Pending] = []
        var stopped = false
        var dropped = 0
    }

    public let path: String
    let pool: DatabasePool
    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let retentionMillis: Int64
    private let maxBuffered = 200_000
    private let maxBodyBytes = 16 * 1024
    private let written = Atomic<Int>(0)

    /// Opens the audit database; with `startWriter` the batching thread runs.
    public init(dataDirectory: String, retentionDays: Int, startWriter: Bool) throws {
        path = (dataDirectory as NSString).appendingPathComponent("audit.sqlite")
        pool = try DatabaseOpener.open(path: path, migrator: Migrations.audit(), fullSync: false)
        retentionMillis = Int64(retentionDays) * 86_400_000
        if startWriter {
            let thread = Thread { [self] in
                Thread.nameCurrent("audit-writer")
                self.run()
            }
            thread.name = "audit-writer"
            thread.start()
        } else {
            done.signal()
        }
    }

    /// Rows written so far by this process.
    public var writtenCount: Int { written.load(ordering: .relaxed) }

    /// Entries waiting for the writer.
    public var queueDepth: Int { state.withLock { $0.buffer.count } }

    /// Queues an entry; `raw` is the unredacted body, redacted before it is stored.
    public func append(_ entry: AuditEntry, raw: [UInt8]) {
        let first = state.withLock { state -> Bool in
            guard state.buffer.count < maxBuffered else {
                state.dropped += 1
                return false
            }
            state.buffer.append(Pending(entry: entry, raw: raw))
            return state.buffer.count == 1
        }
        if first { wakeup.signal() }
    }

    /// Writes what is queued and stops the writer.
    public func close() {
        state.withLock { $0.stopped = true }
        wakeup.signal()
        done.wait()
    }

    private func run() {
        var lastPrune: Int64 = 0
        // Swapped with the shared buffer under the lock: no copy and no allocation there.
        var batch: [Pending] = []
        batch.reserveCapacity(1024)
        while true {
            let (stopped, dropped) = state.withLock { state -> (Bool, Int) in
                swap(&state.buffer, &batch)
                let dropped = state.dropped
                state.dropped = 0
                return (state.stopped, dropped)
            }
            if batch.isEmpty && dropped == 0 {
                if stopped { break }
                _ = wakeup.wait(timeout: .now() + .milliseconds(500))
                continue
            }
            write(batch, dropped: dropped)
            batch.removeAll(keepingCapacity: true)
            let now = SystemClock().nowMillis()
            if retentionMillis > 0, now - lastPrune > 3_600_000 {
                lastPrune = now
                try? pool.write { db in try AuditQueries.prune(db, before: now - retentionMillis) }
            }
            // Let a burst gather into the next batch instead of one transaction per frame.
            if !stopped { usleep(20_000) }
        }
        done.signal()
    }

    private func write(_ batch: [Pending], dropped: Int) {
        do {
            try pool.write { db in
                let chunk = AuditInsert(db: db, statement: try db.cachedStatement(sql: AuditInsert.sql(rows: AuditInsert.chunk)).sqliteStatement)
                let single = AuditInsert(db: db, statement: try db.cachedStatement(sql: AuditInsert.sql(rows: 1)).sqliteStatement)
                var start = 0
                while batch.count - start >= AuditInsert.chunk {
                    for row in 0..<AuditInsert.chunk {
                        chunk.bind(batch[start + row].entry, body: batch[start + row].raw, row: row, maxBodyBytes: maxBodyBytes)
                    }
                    try chunk.step()
                    start += AuditInsert.chunk
                }
                for pending in batch[start...] {
                    single.bind(pending.entry, body: pending.raw, row: 0, maxBodyBytes: maxBodyBytes)
                    try single.step()
                }
                if dropped > 0 {
                    let note = AuditEntry(
                        timeMillis: SystemClock().nowMillis(),
                        connectionID: 0,
                        protocolName: "audit",
                        direction: "-",
                        kind: "note",
                        deviceID: nil,
                        userID: nil,
                        opcode: "dropped",
                        size: dropped,
                        body: "\(dropped) entries dropped: audit queue full"
                    )
                    single.bind(note, body: Array(note.body.utf8), row: 0, maxBodyBytes: maxBodyBytes)
                    try single.step()
                }
            }
            written.add(batch.count + (dropped > 0 ? 1 : 0), ordering: .relaxed)
        } catch {
            FileHandle.standardError.write(Data("clawrelay: audit write failed: \(error)\n".utf8))
        }
    }
}
