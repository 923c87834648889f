import Foundation
import RelayCore
import Synchronization

/// `clawrelay bench store`: the store writer alone, in this process, on a temporary data
/// directory. Each relayed message is what the relay's writer stores for it: its acceptance, then
/// its answer, each in transactions of exactly `batch` messages of different users (the shape
/// the writer sees at a given load: about 4 at half the maximum rate, 50 and more at the
/// maximum). Pages and transactions are exact; the writer's CPU is its own thread's; no network
/// and no generator share the machine's time with it.
public enum StoreBench {
    public struct Options: Sendable {
        public var users = 64
        public var batch = 4
        public var messages = 20_000
        /// Away devices per user: each stored event is queued for them.
        public var awayDevices = 0
        public var directory = NSTemporaryDirectory()

        public init() {}
    }

    public struct Figures: Sendable {
        public var messages = 0
        public var transactions = 0
        public var walPages = 0
        public var writerCPUSeconds = 0.0
        public var writerBusySeconds = 0.0
        public var wallSeconds = 0.0
        /// From queuing a batch to its completion, over every batch (acceptances and answers).
        public var batchMillis: [Double] = []
    }

    public static func run(_ options: Options) throws -> Figures {
        let directory = (options.directory as NSString).appendingPathComponent("clawrelay-bench-store-\(getpid())")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let loop = BenchLoop()
        let store = try Store(dataDirectory: directory, executor: loop)
        defer { store.close() }
        let journal = StoreJournal(store: store) { what, error in FileHandle.standardError.write(Data("bench: \(what): \(error)\n".utf8)) }
        let users = max(1, options.users)
        let batch = max(1, min(options.batch, users))
        let conversations = try (0..<users).map { index in
            try wait { done in
                journal.resolveConversation(.session("bench"), userID: "u\(index)", draft: ConversationDraft(), now: 1) { done($0) }
            }.id
        }
        let away = { (user: Int) in
            (0..<options.awayDevices).map { QueueTarget(deviceID: "away-\(user)-\($0)", ttlMillis: 86_400_000, capacity: 10_000) }
        }
        let before = (pages: store.stats.walPages, batches: store.stats.batches, cpu: store.stats.cpuSeconds, busy: store.stats.busySeconds)
        var result = Figures()
        let started = DispatchTime.now().uptimeNanoseconds
        var next = 0
        while result.messages < options.messages {
            let chosen = (0..<batch).map { (next + $0) % users }
            let sent = result.messages
            next += batch
            let accepted = try timed(&result, store, count: chosen.count) { index, done in
                let user = chosen[index]
                let message = UserMessage(
                    conversationID: conversations[user],
                    userID: "u\(user)",
                    deviceID: "d\(user)",
                    clientID: Identifiers.newUUID(),
                    content: "message \(sent + index) of the store bench"
                )
                journal.accept(message, now: SystemClock().nowMillis(), queue: away(user)) { done($0) }
            }
            let _: [ChatEvent] = try timed(&result, store, count: chosen.count) { index, done in
                let user = chosen[index]
                guard case .fresh(let event, let runID, let answer) = accepted[index] else { return done(.failure(StoreError("not fresh"))) }
                let turn = TurnRef(runID: runID, deviceID: "d\(user)", clientID: event.turn?.clientID ?? "")
                journal.finish(
                    turn,
                    userID: "u\(user)",
                    conversationID: conversations[user],
                    eventID: answer.id,
                    content: "answer to \(event.content)",
                    now: SystemClock().nowMillis(),
                    queue: away(user)
                ) { done($0) }
            }
            result.messages += chosen.count
        }
        result.wallSeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        result.walPages = store.stats.walPages - before.pages
        result.transactions = store.stats.batches - before.batches
        result.writerCPUSeconds = store.stats.cpuSeconds - before.cpu
        result.writerBusySeconds = store.stats.busySeconds - before.busy
        return result
    }

    /// Queues `count` operations as one batch and waits for all of them.
    private static func timed<T: Sendable>(
        _ result: inout Figures,
        _ store: Store,
        count: Int,
        _ submit: (Int, @escaping @Sendable (Result<T, any Error>) -> Void) -> Void
    ) throws -> [T] {
        let outcomes = Mutex([Swift.Result<T, any Error>?](repeating: nil, count: count))
        let group = DispatchGroup()
        let started = DispatchTime.now().uptimeNanoseconds
        store.gather {
            for index in 0..<count {
                group.enter()
                submit(index) { outcome in
                    outcomes.withLock { $0[index] = outcome }
                    group.leave()
                }
            }
        }
        group.wait()
        result.batchMillis.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
        return try outcomes.withLock { $0 }.map { try $0!.get() }
    }

    private static func wait<T: Sendable>(_ start: (@escaping @Sendable (Swift.Result<T, any Error>) -> Void) -> Void) throws -> T {
        let outcome = Mutex<Swift.Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        start { value in
            outcome.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0 }!.get()
    }
}

/// The bench's loop: completions run on one serial queue, as on the relay's loop thread.
private final class BenchLoop: LoopExecutor {
    private let queue = DispatchQueue(label: "bench-store-loop")
    private let key = DispatchSpecificKey<Bool>()

    init() { queue.setSpecific(key: key, value: true) }

    func execute(_ job: @escaping @Sendable () -> Void) { queue.async(execute: job) }
    var isOnLoop: Bool { DispatchQueue.getSpecific(key: key) == true }
}
