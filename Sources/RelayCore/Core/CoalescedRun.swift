/// An asynchronous job that runs one at a time: asked for while it runs, it runs once more right
/// after (however often it was asked meanwhile), so the newest ask is served and no two runs
/// overlap. A read of the store that hints wake, say.
///
/// - Important: one thread (the loop).
public final class CoalescedRun {
    private var running = false
    private var again = false

    public init() {}

    /// Starts `job` now, or once the running one has finished. `job` calls `finished` when its
    /// work is done; `finished` returns true when the job starts again at once (it was asked for
    /// meanwhile).
    public func run(_ job: @escaping (_ finished: @escaping () -> Bool) -> Void) {
        guard !running else {
            again = true
            return
        }
        (running, again) = (true, false)
        job { [self] in
            running = false
            guard again else { return false }
            run(job)
            return true
        }
    }
}
