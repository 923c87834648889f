import Foundation
import RelayBench
import RelayStore

/// `clawrelay bench store`: the store writer alone (see `StoreBench`), reported with the other
/// scenarios' figures.
enum BenchStore {
    static func run(users: Int?, batch: Int?, messages: Int?, away: Int?, smoke: Bool, into report: inout BenchReport) throws {
        var options = StoreBench.Options()
        if let users { options.users = max(1, min(users, 100_000)) }
        if let batch { options.batch = max(1, min(batch, 512)) }
        options.messages = max(1, min(messages ?? (smoke ? 400 : 20_000), 10_000_000))
        if let away { options.awayDevices = max(0, min(away, 64)) }
        FileHandle.standardError.write(
            Data(
                "bench: store: \(options.messages) messages of \(options.users) users, \(min(options.batch, options.users)) a transaction, \(options.awayDevices) away devices each\n"
                    .utf8
            )
        )
        let figures = try StoreBench.run(options)
        let count = Double(max(1, figures.messages))
        report.add("store", "messages", Double(figures.messages), "count")
        report.add("store", "throughput", Double(figures.messages) / figures.wallSeconds, "messages/s (the writer alone)")
        report.add("store", "pages_per_message", Double(figures.walPages) / count, "WAL pages")
        report.add("store", "transactions_per_message", Double(figures.transactions) / count, "transactions (one fsync each)")
        report.add("store", "writer_cpu_per_message", figures.writerCPUSeconds * 1e6 / count, "µs (writer thread CPU)")
        report.add("store", "writer_busy_per_message", figures.writerBusySeconds * 1e6 / count, "µs (in transactions, wall)")
        let sorted = figures.batchMillis.sorted()
        for (name, fraction) in [("p50", 0.5), ("p99", 0.99)] where !sorted.isEmpty {
            report.add("store", "batch_\(name)_ms", sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))], "ms (queued → completed)")
        }
    }
}
