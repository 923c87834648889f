import Foundation
import RelayTransport

extension BenchRunner {
    /// Open-loop load at `rate` messages/s for `seconds`, then up to `drainSeconds` for the last answers.
    func driveAtRate(_ devices: UncheckedBox<[BenchDevice]>, rate: Double, seconds: Double, prefix: String) throws -> RoundtripDriver.Result {
        let (loop, drain) = (self.loop, max(30, seconds))
        return try waitOnLoop(loop, timeout: seconds + drain + 60) { done in
            let driver = FixedRateDriver(
                devices: devices.value,
                loop: loop,
                rate: rate,
                durationSeconds: seconds,
                drainSeconds: drain,
                prefix: prefix
            )
            driver.run { result in
                _ = driver
                done(result)
            }
        }
    }

    /// The open-loop figures: the rate asked for and achieved, what was sent and left unanswered,
    /// and how late the generator sent (latencies above already include that lateness).
    func recordRate(_ scenario: String, _ result: RoundtripDriver.Result, target: Double) {
        report.add(scenario, "target_rate", target, "messages/s")
        report.add(scenario, "sent", Double(result.sent), "count")
        report.add(scenario, "send_rate", result.sendSeconds > 0 ? Double(result.sent - 1) / result.sendSeconds : 0, "messages/s")
        report.add(scenario, "unanswered", Double(result.unanswered), "count")
        for (key, value) in result.lateness.summary("send_lateness").sorted(by: { $0.key < $1.key }) where !key.contains("p90") {
            report.add(scenario, key, value, "ms")
        }
    }

    /// p50 and p99 of every stage the relay counted, from its `/metrics` after the load.
    func recordStages(_ scenario: String, _ relay: RelayProcess) {
        let stages = StageSummary.parse(relay.metrics())
        if stages.isEmpty { report.notes.append("\(scenario): the relay's /metrics had no stage summaries") }
        for stage in stages where stage.count > 0 {
            report.add(scenario, "stage_\(stage.stage)_count", Double(stage.count), "messages")
            for (quantile, label) in [("0.5", "p50"), ("0.99", "p99")] {
                if let seconds = stage.quantiles[quantile] { report.add(scenario, "stage_\(stage.stage)_\(label)_ms", seconds * 1000, "ms") }
            }
        }
    }

    /// The store writer over the load window: transactions per message, operations per
    /// transaction, the share of the window it spent inside transactions, and the pages its
    /// commits wrote to the write-ahead log.
    func recordStore(_ scenario: String, _ window: StoreCounters, wall: Double, messages: Int) {
        guard window.transactions > 0, messages > 0, wall > 0 else { return }
        report.add(scenario, "store_transactions_per_message", window.transactions / Double(messages), "transactions")
        report.add(scenario, "store_operations_per_transaction", window.operations / window.transactions, "operations")
        report.add(scenario, "store_busy", window.busySeconds / wall * 100, "% of the window in transactions")
        report.add(scenario, "store_pages_per_message", window.walPages / Double(messages), "WAL pages (one fsync per transaction)")
        report.add(scenario, "store_pages_per_transaction", window.walPages / window.transactions, "WAL pages")
        report.add(scenario, "store_checkpoint", window.checkpointSeconds / wall * 100, "% of the window checkpointing")
        report.add(scenario, "store_checkpoint_max_ms", window.checkpointMaxSeconds * 1000, "ms, the longest since the relay started")
        report.add(scenario, "store_log_pages_max", window.logPagesMax, "pages in the log at a checkpoint, most since start")
    }

    /// CPU per relay thread name over the load window: share of a core and µs per message.
    func recordThreads(_ scenario: String, _ usage: [ThreadCPUMeter.Usage], processCPU: Double, wall: Double, messages: Int) {
        guard wall > 0 else { return }
        var attributed = 0.0
        for thread in usage where thread.seconds > 0 {
            attributed += thread.seconds
            let name = "thread_" + Self.metricName(thread.name)
            let threads = thread.threads > 1 ? " (\(thread.threads) threads)" : ""
            report.add(scenario, name + "_cpu", thread.seconds / wall * 100, "% of one core" + threads)
            if messages > 0 { report.add(scenario, name + "_cpu_per_message", thread.seconds / Double(messages) * 1e6, "µs") }
        }
        // Threads that ended during the window are in the process total only.
        let ended = processCPU - attributed
        if ended >= 0.02 { report.add(scenario, "threads_ended_cpu", ended / wall * 100, "% of one core") }
    }

    /// A thread name as a metric name: letters, digits, `-`, `_` and `.` kept, anything else `_`.
    static func metricName(_ name: String) -> String {
        String(name.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "_" })
    }
}
