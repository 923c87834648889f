import Synchronization

/// Parts whose number a reload changes (Claude Code backends, push HTTP clients): one entry of
/// `Components` stops whichever are registered when the relay stops, in its place in the order.
final class StopList: Sendable {
    private let stops = Mutex<[(id: ObjectIdentifier, stop: @Sendable () -> Void)]>([])

    /// `object` runs until `stop` (once).
    func add(_ object: AnyObject, stop: @escaping @Sendable () -> Void) {
        stops.withLock { $0.append((ObjectIdentifier(object), stop)) }
    }

    /// `object` was stopped otherwise (a reload retired it).
    func remove(_ object: AnyObject) {
        stops.withLock { $0.removeAll { $0.id == ObjectIdentifier(object) } }
    }

    /// Stops every registered part, oldest first, and forgets them.
    func stopAll() {
        let all = stops.withLock { stops in
            defer { stops = [] }
            return stops
        }
        for entry in all { entry.stop() }
    }
}
