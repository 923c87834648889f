/// Where one device is: in use, known but not in use, or gone. A pure state machine fed by
/// bridge signals; the caller supplies the time.
///
/// - `connected` makes a device foreground (a new socket means the app is in use).
/// - `backgrounded` makes it background, socket or not; `foregrounded` brings it back only while
///   it has a socket (foreground without a socket would lose live events).
/// - When its last socket closes a foreground device goes offline; a background one stays
///   background (iOS drops a suspended app's socket) until `expire` finds it idle past the TTL.
public struct DevicePresence: Sendable, Equatable {
    public enum State: String, Sendable, CaseIterable, Codable {
        case foreground
        case background
        case offline
    }

    public enum Signal: Sendable, Equatable {
        case connected(socket: UInt64)
        case disconnected(socket: UInt64)
        case backgrounded
        case foregrounded
    }

    public private(set) var state: State = .offline
    public private(set) var sockets: Set<UInt64> = []
    /// When `state` was entered.
    public private(set) var since: Int64

    public init(now: Int64) { since = now }

    /// Applies `signal` and returns the new state when it changed.
    @discardableResult
    public mutating func apply(_ signal: Signal, now: Int64) -> State? {
        let next: State
        switch signal {
        case .connected(let socket):
            sockets.insert(socket)
            next = .foreground
        case .disconnected(let socket):
            guard sockets.remove(socket) != nil else { return nil }
            next = sockets.isEmpty && state == .foreground ? .offline : state
        case .backgrounded:
            next = .background
        case .foregrounded:
            next = sockets.isEmpty ? state : .foreground
        }
        return enter(next, now: now)
    }

    /// A background device with no socket for `ttlMillis` is offline; returns the new state when it changed.
    @discardableResult
    public mutating func expire(now: Int64, ttlMillis: Int64) -> State? {
        guard state == .background, sockets.isEmpty, now - since >= ttlMillis else { return nil }
        return enter(.offline, now: now)
    }

    private mutating func enter(_ next: State, now: Int64) -> State? {
        guard next != state else { return nil }
        state = next
        since = now
        return next
    }
}
