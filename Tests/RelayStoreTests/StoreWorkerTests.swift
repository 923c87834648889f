import Dispatch
import Foundation
import RelayCore
import Synchronization
import Testing

@testable import RelayStore

/// A serial queue standing in for the service loop.
final class QueueLoop: LoopExecutor {
    private let queue = DispatchQueue(label: "test-loop")
    private let key = DispatchSpecificKey<Bool>()

    init() { queue.setSpecific(key: key, value: true) }

    func execute(_ job: @escaping @Sendable () -> Void) { queue.async(execute: job) }
    var isOnLoop: Bool { DispatchQueue.getSpecific(key: key) == true }
}

struct Boom: Error {}

@Suite struct StoreWorkerTests {
    @Test func aFailingOperationFailsAloneAndLeavesNoWrites() async throws {
        let directory = NSTemporaryDirectory() + "clawrelay-worker-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(dataDirectory: directory, executor: QueueLoop())
        let outcomes = Mutex<[String: Bool]>([:])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let remaining = Mutex(3)
            func finish(_ name: String, _ ok: Bool) {
                outcomes.withLock { $0[name] = ok }
                if remaining.withLock({
                    $0 -= 1
                    return $0
                }) == 0 {
                    done.resume()
                }
            }
            for name in ["first", "broken", "last"] {
                store.perform({ db in
                    _ = try EventQueries.append(
                        db,
                        userID: "u",
                        conversationID: "main",
                        role: .user,
                        content: name,
                        deviceID: nil,
                        attachmentsJSON: nil,
                        at: 1
                    )
                    if name == "broken" { throw Boom() }
                }) { result in
                    if case .success = result { finish(name, true) } else { finish(name, false) }
                }
            }
        }
        #expect(outcomes.withLock { $0 } == ["first": true, "broken": false, "last": true])
        let contents = try store.read { try EventQueries.replay($0, audiences: ["u"], after: nil, limit: 10) }.events.map(\.content)
        #expect(contents == ["first", "last"])
        store.close()
    }

    @Test func whatIsGatheredCommitsInOneTransactionWithTheWritersCPUCounted() async throws {
        let directory = NSTemporaryDirectory() + "clawrelay-worker-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(dataDirectory: directory, executor: QueueLoop())
        let before = store.stats.batches
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let remaining = Mutex(5)
            store.gather {
                for index in 0..<5 {
                    store.perform({ db in
                        _ = try EventQueries.append(
                            db,
                            userID: "u",
                            conversationID: "main",
                            role: .user,
                            content: "\(index)",
                            deviceID: nil,
                            attachmentsJSON: nil,
                            at: 1
                        )
                    }) { _ in
                        if remaining.withLock({
                            $0 -= 1
                            return $0
                        }) == 0 {
                            done.resume()
                        }
                    }
                }
            }
        }
        #expect(store.stats.batches == before + 1, "five operations, one transaction")
        #expect(store.stats.operations == 5 && store.stats.cpuSeconds > 0)
        store.close()
    }
}
