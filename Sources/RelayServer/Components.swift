import Foundation
import Logging

/// The relay's parts in the order they started (data directory, store, audit, HTTP clients, the
/// service loop with the core and the bridges, mDNS), stopped in reverse order, each within a
/// bound: a part whose stop hangs is reported and left behind, so a stop always ends.
final class Components {
    private struct Part {
        let name: String
        let stop: () -> Void
    }

    private let logger: Logger
    private var parts: [Part] = []
    /// How long one part may take to stop.
    let stopBoundSeconds: Double

    init(logger: Logger, stopBoundSeconds: Double = 10) {
        self.logger = logger
        self.stopBoundSeconds = stopBoundSeconds
    }

    /// `name` is running; `stop` ends it (called once, after every part started later has stopped).
    func started(_ name: String, stop: @escaping () -> Void) {
        parts.append(Part(name: name, stop: stop))
    }

    /// The parts started so far, oldest first.
    var names: [String] { parts.map(\.name) }

    /// Stops every part, newest first. Returns the parts that did not stop within the bound.
    @discardableResult
    func stopAll() -> [String] {
        var overran: [String] = []
        while let part = parts.popLast() {
            let done = DispatchSemaphore(value: 0)
            let stop = UncheckedStop(part.stop)
            let thread = Thread {
                stop.run()
                done.signal()
            }
            thread.name = "stop-\(part.name)"
            thread.start()
            if done.wait(timeout: .now() + stopBoundSeconds) == .timedOut {
                logger.error(
                    "a part of the relay did not stop in time; leaving it",
                    metadata: ["part": "\(part.name)", "bound_seconds": "\(stopBoundSeconds)"]
                )
                overran.append(part.name)
            }
        }
        return overran
    }
}

/// A stop closure handed to the thread that runs it. `@unchecked Sendable` holds because the
/// closure runs once, on that thread, while the thread that made it only waits for it.
private final class UncheckedStop: @unchecked Sendable {
    private let body: () -> Void

    init(_ body: @escaping () -> Void) { self.body = body }

    func run() { body() }
}
