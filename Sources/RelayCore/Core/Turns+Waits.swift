/// How a run ended, kept a while for whoever asks after the end (OpenClaw's `agent.wait`).
public struct RunEnding: Sendable, Equatable {
    public enum Outcome: Sendable, Equatable {
        case answered
        case failed(TurnFailure)
    }

    public var runID: String
    public var userID: String
    public var outcome: Outcome
    public var endedAt: Int64

    public init(runID: String, userID: String, outcome: Outcome, endedAt: Int64) {
        self.runID = runID
        self.userID = userID
        self.outcome = outcome
        self.endedAt = endedAt
    }

    /// How `end` ended the run `runID`.
    public init(runID: String, _ end: TurnEnd) {
        switch end {
        case .answered(let event): self.init(runID: runID, userID: event.userID, outcome: .answered, endedAt: event.timestampMillis)
        case .failed(let failure): self.init(runID: runID, userID: failure.userID, outcome: .failed(failure), endedAt: failure.timestampMillis)
        }
    }
}

/// A wait for a run's end, which its owner may give up (`Turns.unwatch`).
public struct RunWatch: Hashable, Sendable {
    let runID: String
    let id: UInt64
}

/// One waiter: a user's run only (run ids are the clients' idempotency keys, unique per user), or
/// any user's when `userID` is nil.
struct RunWatcher {
    let id: UInt64
    let userID: String?
    let handler: (TurnEnd) -> Void

    func wants(_ userID: String) -> Bool { self.userID == nil || self.userID == userID }
}

/// The last runs' endings by user and run id, the oldest forgotten first past `capacity`: an
/// answer to "has it ended?" that costs a bounded amount of memory (the answers themselves are
/// history; this keeps only how each run ended).
struct RunEndings {
    static let defaultCapacity = 1000

    private struct Key: Hashable {
        var userID: String
        var runID: String
    }

    let capacity: Int
    private var byKey: [Key: (ending: RunEnding, stamp: UInt64)] = [:]
    /// Keys in the order they were recorded (a key recorded again appears twice; `stamp` tells).
    private var order: [(key: Key, stamp: UInt64)] = []
    private var head = 0
    private var stamp: UInt64 = 0

    init(capacity: Int) { self.capacity = max(1, capacity) }

    var count: Int { byKey.count }

    mutating func record(_ ending: RunEnding) {
        stamp += 1
        let key = Key(userID: ending.userID, runID: ending.runID)
        byKey[key] = (ending, stamp)
        order.append((key, stamp))
        while byKey.count > capacity, head < order.count {
            let oldest = order[head]
            head += 1
            if byKey[oldest.key]?.stamp == oldest.stamp { byKey.removeValue(forKey: oldest.key) }
        }
        // Drop what was read of the order once it is most of it, so it never outgrows twice the capacity.
        if head > capacity {
            order.removeFirst(head)
            head = 0
        }
    }

    func ending(runID: String, userID: String) -> RunEnding? { byKey[Key(userID: userID, runID: runID)]?.ending }
}

extension Turns {
    /// How the user's run `runID` ended, if it ended lately (the last `RunEndings.defaultCapacity`
    /// endings are kept); nil while it runs, waits, or is unknown.
    public func ending(ofRun runID: String, userID: String) -> RunEnding? { endings.ending(runID: runID, userID: userID) }

    /// Calls `handler` once when the run `runID` (of `userID`, or of anyone when nil) ends, unless
    /// `unwatch` gives the wait up first. The run need not have started: a wait registered before
    /// its message is stored hears its end too.
    @discardableResult
    public func watch(runID: String, userID: String?, _ handler: @escaping (TurnEnd) -> Void) -> RunWatch {
        nextWatchID += 1
        watchers[runID, default: []].append(RunWatcher(id: nextWatchID, userID: userID, handler: handler))
        return RunWatch(runID: runID, id: nextWatchID)
    }

    /// Gives a wait up: its handler is never called (nothing happens when it already was).
    public func unwatch(_ watch: RunWatch) {
        guard var waiting = watchers[watch.runID] else { return }
        waiting.removeAll { $0.id == watch.id }
        watchers[watch.runID] = waiting.isEmpty ? nil : waiting
    }

    /// Waits registered and not yet called or given up, for every run (for tests and leaks).
    public var watchCount: Int { watchers.values.reduce(0) { $0 + $1.count } }

    /// A run ended: it is remembered, and whoever waits for it hears how.
    func ended(_ runID: String, _ end: TurnEnd) {
        let ending = RunEnding(runID: runID, end)
        endings.record(ending)
        guard let waiting = watchers.removeValue(forKey: runID) else { return }
        let others = waiting.filter { !$0.wants(ending.userID) }
        if !others.isEmpty { watchers[runID] = others }
        for watcher in waiting where watcher.wants(ending.userID) { watcher.handler(end) }
    }
}
