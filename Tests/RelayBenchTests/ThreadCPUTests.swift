import Foundation
import RelayCore
import Testing

@testable import RelayBench

@Suite struct ThreadCPUTests {
    @Test func parsesTheTimesAfterANameWithSpacesAndParentheses() throws {
        let line = "4242 (lws (x) 1) S 1 4242 4242 0 -1 4194368 1200 0 0 0 731 269 0 0 20 0 6 0 12345 1000000 500 18446744073709551615"
        let stat = try #require(ThreadStat.parse(line))
        #expect(stat == ThreadStat(tid: 4242, name: "lws (x) 1", ticks: 1_000))
    }

    @Test func refusesLinesThatAreNotStat() {
        #expect(ThreadStat.parse("") == nil)
        #expect(ThreadStat.parse("12 (short) S 1 2 3") == nil)
        #expect(ThreadStat.parse("x (name) S 1 1 1 0 -1 0 0 0 0 0 1 1 0 0") == nil)
        #expect(ThreadStat.parse("12 (name) S 1 1 1 0 -1 0 0 0 0 0 x 1 0 0") == nil)
    }

    @Test func readsEveryThreadOfThisProcessFromProc() throws {
        let threads = ThreadStat.read(pid: getpid())
        let main = try #require(threads.first { $0.tid == getpid() }, "the main thread's tid is the pid")
        let comm = try String(contentsOfFile: "/proc/self/comm", encoding: .utf8).trimmingCharacters(in: .newlines)
        #expect(main.name == comm)
        let listed = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count
        #expect(threads.count <= listed + 4 && threads.count >= 1)
    }

    @Test func aBusyThreadIsChargedByName() async throws {
        let pid = getpid()
        let meter = ThreadCPUMeter(pid: pid)
        let release = DispatchSemaphore(value: 0)
        // The probe burns 200 ms of its own CPU time, reports, then waits (alive) to be measured.
        await withCheckedContinuation { (spun: CheckedContinuation<Void, Never>) in
            let probe = Thread {
                // Named by the thread itself, so the kernel has the name (`Thread.nameCurrent`).
                Thread.nameCurrent("cpu-probe")
                Self.burn(cpuMillis: 200)
                spun.resume()
                release.wait()
            }
            probe.start()
        }
        let used = meter.used()
        release.signal()
        let probe = try #require(used.first { $0.name == "cpu-probe" }, "\(used)")
        #expect(probe.threads == 1)
        #expect(probe.seconds >= 0.1 && probe.seconds < 5, "\(probe.seconds) s")
    }

    @Test func usageCountsNewThreadsWholeMergesNamesAndLosesEndedOnes() {
        let before = [
            ThreadStat(tid: 1, name: "main", ticks: 100), ThreadStat(tid: 2, name: "worker", ticks: 10), ThreadStat(tid: 3, name: "gone", ticks: 50),
            ThreadStat(tid: 4, name: "old", ticks: 70),
        ]
        let after = [
            ThreadStat(tid: 1, name: "main", ticks: 150), ThreadStat(tid: 2, name: "worker", ticks: 30),
            ThreadStat(tid: 5, name: "worker", ticks: 20), ThreadStat(tid: 4, name: "reused", ticks: 5),
        ]
        let usage = ThreadCPUMeter.usage(from: before, to: after, ticksPerSecond: 100)
        #expect(
            usage == [
                .init(name: "main", seconds: 0.5, threads: 1), .init(name: "worker", seconds: 0.4, threads: 2),
                .init(name: "reused", seconds: 0.05, threads: 1),
            ]
        )
    }

    /// Spins until this thread has used `cpuMillis` of CPU (its own clock, not the wall's).
    private static func burn(cpuMillis: Int) {
        var spent = timespec()
        var sink = 0
        repeat {
            for step in 0..<100_000 { sink &+= step }
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spent)
        } while spent.tv_sec * 1_000 + spent.tv_nsec / 1_000_000 < cpuMillis
        blackHole(sink)
    }

    @inline(never) private static func blackHole(_ value: Int) { _ = value }
}

@Suite struct StoreCountersTests {
    @Test func readsTheWriterCountersAndTheirDifference() {
        let text = """
            # TYPE clawrelay_store_batches_total counter
            clawrelay_store_batches_total 12
            clawrelay_store_operations_total 300
            clawrelay_store_busy_seconds_total 0.25
            clawrelay_store_last_batch_seconds 0.001
            clawrelay_store_checkpoint_seconds_total 0.5
            clawrelay_store_checkpoint_max_seconds 0.02
            clawrelay_store_log_pages_max 900
            """
        let later = StoreCounters.parse(text)
        #expect(
            later
                == StoreCounters(
                    transactions: 12,
                    operations: 300,
                    busySeconds: 0.25,
                    checkpointSeconds: 0.5,
                    checkpointMaxSeconds: 0.02,
                    logPagesMax: 900
                )
        )
        let earlier = StoreCounters(
            transactions: 2,
            operations: 100,
            busySeconds: 0.05,
            checkpointSeconds: 0.1,
            checkpointMaxSeconds: 0.01,
            logPagesMax: 100
        )
        // The maxima are since the relay started: the later reading's stand.
        #expect(
            later.since(earlier)
                == StoreCounters(
                    transactions: 10,
                    operations: 200,
                    busySeconds: 0.2,
                    checkpointSeconds: 0.4,
                    checkpointMaxSeconds: 0.02,
                    logPagesMax: 900
                )
        )
    }
}

@Suite struct StageSummaryTests {
    @Test func readsQuantilesAndCountsPerStageInOrder() {
        let text = """
            HTTP/1.1 200 OK\r
            # TYPE clawrelay_message_stage_seconds summary
            clawrelay_message_stage_seconds{stage="received_to_submitted",quantile="0.5"} 1.25e-05
            clawrelay_message_stage_seconds{stage="received_to_submitted",quantile="0.99"} 0.002
            clawrelay_message_stage_seconds_sum{stage="received_to_submitted"} 0.01
            clawrelay_message_stage_seconds_count{stage="received_to_submitted"} 7
            clawrelay_message_stage_seconds_sum{stage="store_queue"} 0
            clawrelay_message_stage_seconds_count{stage="store_queue"} 0
            clawrelay_turns_total{outcome="completed"} 7
            """
        #expect(
            StageSummary.parse(text) == [
                StageSummary(stage: "received_to_submitted", count: 7, quantiles: ["0.5": 1.25e-05, "0.99": 0.002]),
                StageSummary(stage: "store_queue", count: 0, quantiles: [:]),
            ]
        )
    }
}
