import Synchronization

/// The PostgreSQL backends (session PIDs) a node writes the log through: its writer's current
/// connection. `relay_notify` starts each payload with the sending backend's PID (`@PID`), so the
/// node's listener knows its own commits, which its writer already handed out, and reports only
/// other nodes'.
public final class OwnBackends: Sendable {
    private let pids = Mutex<Set<Int32>>([])

    public init() {}

    /// The writer connected again: `pid` is its backend now (the old one is gone with its session).
    func replace(_ old: Int32?, with pid: Int32) {
        pids.withLock { pids in
            if let old { pids.remove(old) }
            pids.insert(pid)
        }
    }

    public func contains(_ pid: Int32) -> Bool { pids.withLock { $0.contains(pid) } }

    /// The sending backend a payload names (`@PID;…`), and the payload without it.
    static func origin(of payload: String) -> (pid: Int32?, positions: Substring) {
        guard payload.hasPrefix("@"), let end = payload.firstIndex(of: ";") else { return (nil, payload[...]) }
        return (Int32(payload[payload.index(after: payload.startIndex)..<end]), payload[payload.index(after: end)...])
    }
}
