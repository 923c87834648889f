import Foundation

/// The relay's store writer counters (`clawrelay_store_*`, cumulative since it started), read
/// from its `/metrics` text, so a load window's batches can be told from two readings.
struct StoreCounters: Equatable, Sendable {
    var transactions = 0.0
    var operations = 0.0
    var busySeconds = 0.0
    var walPages = 0.0
    var checkpointSeconds = 0.0
    /// Not a counter: the longest checkpoint and the longest log since the relay started.
    var checkpointMaxSeconds = 0.0
    var logPagesMax = 0.0

    static func parse(_ text: String) -> StoreCounters {
        var counters = StoreCounters()
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let value = Double(parts[1]) else { continue }
            switch parts[0] {
            case "clawrelay_store_batches_total": counters.transactions = value
            case "clawrelay_store_operations_total": counters.operations = value
            case "clawrelay_store_busy_seconds_total": counters.busySeconds = value
            case "clawrelay_store_wal_pages_total": counters.walPages = value
            case "clawrelay_store_checkpoint_seconds_total": counters.checkpointSeconds = value
            case "clawrelay_store_checkpoint_max_seconds": counters.checkpointMaxSeconds = value
            case "clawrelay_store_log_pages_max": counters.logPagesMax = value
            default: break
            }
        }
        return counters
    }

    /// What was counted between `earlier` and these counters.
    func since(_ earlier: StoreCounters) -> StoreCounters {
        StoreCounters(
            transactions: transactions - earlier.transactions,
            operations: operations - earlier.operations,
            busySeconds: busySeconds - earlier.busySeconds,
            walPages: walPages - earlier.walPages,
            checkpointSeconds: checkpointSeconds - earlier.checkpointSeconds,
            checkpointMaxSeconds: checkpointMaxSeconds,
            logPagesMax: logPagesMax
        )
    }
}
