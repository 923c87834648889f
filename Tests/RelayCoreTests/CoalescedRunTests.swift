import RelayCore
import Testing

@Suite struct CoalescedRunTests {
    /// A job whose runs end when the test says so.
    final class Job {
        let coalesced = CoalescedRun()
        var started = 0
        var pending: [() -> Bool] = []

        func ask() {
            coalesced.run { [self] finished in
                started += 1
                pending.append(finished)
            }
        }

        /// Ends the oldest run; whether another started at once.
        func finish() -> Bool { pending.removeFirst()() }
    }

    @Test func asksDuringARunMakeOneMoreRunAfterIt() {
        let job = Job()
        job.ask()
        job.ask()
        job.ask()
        #expect(job.started == 1, "never two at once")
        #expect(job.finish(), "asked for meanwhile: it runs again")
        #expect(job.started == 2, "once, however often it was asked")
        #expect(!job.finish())
        #expect(job.started == 2 && job.pending.isEmpty)
        job.ask()
        #expect(job.started == 3, "idle: it runs at once")
    }
}
