/// How a device's protocol delivers what it missed.
public enum MissedDelivery: Sendable, Equatable {
    /// The client resumes from a cursor (Clawline's `lastMessageId`, gateway `chat.history`): no queue.
    case replay
    /// The relay keeps a notification queue for the device: the events of the conversations it
    /// follows (those named in `scheme`; nil = all) that it does not take live.
    case queue(ttlMillis: Int64, capacity: Int, scheme: String?)
}

/// Every device the relay has heard from since it started, with its presence.
///
/// - Important: loop thread only.
public final class Presence {
    public struct Entry: Sendable, Equatable {
        public var userID: String
        public var protocolName: String
        public var delivery: MissedDelivery
        public var presence: DevicePresence
    }

    private let clock: any Clock
    public private(set) var entries: [String: Entry] = [:]
    /// Per user, the devices that keep a notification queue (most users have none).
    private var queueing: [String: Set<String>] = [:]
    /// Called after every state change; the hub persists it and starts queue drains.
    var onChange: ((String, Entry, DevicePresence.State) -> Void)?

    init(clock: any Clock) { self.clock = clock }

    /// Makes the device known (or updates how it is reached) without changing its state.
    public func register(deviceID: String, userID: String, protocolName: String, delivery: MissedDelivery) {
        if var entry = entries[deviceID] {
            queueing[entry.userID]?.remove(deviceID)
            entry.userID = userID
            entry.protocolName = protocolName
            entry.delivery = delivery
            entries[deviceID] = entry
        } else {
            entries[deviceID] = Entry(
                userID: userID,
                protocolName: protocolName,
                delivery: delivery,
                presence: DevicePresence(now: clock.nowMillis())
            )
        }
        if case .queue = delivery { queueing[userID, default: []].insert(deviceID) }
    }

    /// Feeds a bridge signal to a registered device.
    public func signal(_ signal: DevicePresence.Signal, deviceID: String) {
        guard var entry = entries[deviceID] else { return }
        let changed = entry.presence.apply(signal, now: clock.nowMillis())
        entries[deviceID] = entry
        if let changed { onChange?(deviceID, entry, changed) }
    }

    /// Moves background devices idle past `ttlMillis` offline.
    func expire(ttlMillis: Int64) {
        let now = clock.nowMillis()
        for (deviceID, var entry) in entries {
            guard let changed = entry.presence.expire(now: now, ttlMillis: ttlMillis) else { continue }
            entries[deviceID] = entry
            onChange?(deviceID, entry, changed)
        }
    }

    public func state(of deviceID: String) -> DevicePresence.State { entries[deviceID]?.presence.state ?? .offline }

    public func isForeground(_ deviceID: String) -> Bool { state(of: deviceID) == .foreground }

    /// The devices of `userID` that keep a queue, with their policy, in device id order.
    /// The users with a device that keeps a queue.
    var queueUsers: [String] { queueing.compactMap { $0.value.isEmpty ? nil : $0.key } }

    func queueDevices(userID: String) -> [(deviceID: String, entry: Entry)] {
        guard let devices = queueing[userID], !devices.isEmpty else { return [] }
        return devices.sorted().compactMap { deviceID in entries[deviceID].map { (deviceID, $0) } }
    }

    /// Devices per state, for `/metrics`.
    public var counts: [DevicePresence.State: Int] {
        var counts = Dictionary(uniqueKeysWithValues: DevicePresence.State.allCases.map { ($0, 0) })
        for entry in entries.values { counts[entry.presence.state, default: 0] += 1 }
        return counts
    }
}
