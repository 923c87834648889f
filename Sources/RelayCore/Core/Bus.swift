/// A live socket of a device, in whatever protocol it speaks.
///
/// - Important: called on the loop thread.
public protocol DeviceEndpoint: AnyObject {
    var deviceID: String { get }
    /// The conversations this socket listens to; nil means every conversation of its user.
    var conversations: Set<String>? { get }
    func deliver(_ event: BusEvent)
    /// Events the device missed while it was away, oldest first; `written` runs once the last
    /// of them is on the wire (not if the socket closes first).
    func deliverQueued(_ events: [QueuedEvent], written: @escaping () -> Void)
}

extension DeviceEndpoint {
    public var conversations: Set<String>? { nil }

    public func listens(to conversationID: String) -> Bool { conversations?.contains(conversationID) ?? true }

    public func deliverQueued(_ events: [QueuedEvent], written: @escaping () -> Void) {
        for event in events { deliver(event.item.busEvent) }
        written()
    }
}

/// Fans every event of a user out to that user's live devices that are in the foreground.
///
/// An endpoint hears its own user and may also join shared audiences (an audience is named like
/// a user and owns shared conversations, e.g. the admin channel every admin device hears).
///
/// Owned by the loop thread. Delivery order per endpoint is publish order.
public final class Bus {
    private let presence: Presence
    private var endpoints: [String: [ObjectIdentifier: DeviceEndpoint]] = [:]
    /// How many audiences each endpoint is registered under.
    private var memberships: [ObjectIdentifier: Int] = [:]
    /// Per device, its endpoints in registration order (the newest is last).
    private var byDevice: [String: [DeviceEndpoint]] = [:]
    /// Where live events (typing, progress, tools, approvals: what no queue keeps) go besides this
    /// node's sockets: the cluster's other nodes. Nil on a single node.
    var forwardLive: ((BusEvent, String) -> Void)?

    init(presence: Presence) { self.presence = presence }

    /// Adds `endpoint` to the audience `user` (its own user, or a shared audience).
    public func register(_ endpoint: DeviceEndpoint, user: String) {
        let id = ObjectIdentifier(endpoint)
        guard endpoints[user]?[id] == nil else { return }
        endpoints[user, default: [:]][id] = endpoint
        memberships[id, default: 0] += 1
        guard memberships[id] == 1 else { return }
        byDevice[endpoint.deviceID, default: []].removeAll { $0 === endpoint }
        byDevice[endpoint.deviceID, default: []].append(endpoint)
    }

    /// Takes `endpoint` out of the audience `user`; out of the bus once it is in none.
    public func unregister(_ endpoint: DeviceEndpoint, user: String) {
        let id = ObjectIdentifier(endpoint)
        guard endpoints[user]?.removeValue(forKey: id) != nil else { return }
        if endpoints[user]?.isEmpty == true { endpoints.removeValue(forKey: user) }
        memberships[id, default: 1] -= 1
        guard memberships[id] == 0 else { return }
        memberships.removeValue(forKey: id)
        byDevice[endpoint.deviceID]?.removeAll { $0 === endpoint }
        if byDevice[endpoint.deviceID]?.isEmpty == true { byDevice.removeValue(forKey: endpoint.deviceID) }
    }

    /// Delivers to every socket of `user` whose device is in the foreground and that listens to
    /// the event's conversation, except devices in `skipping` (they get it from their queue).
    public func publish(_ event: BusEvent, to user: String, skipping: Set<String> = []) {
        if let forwardLive, QueueItem(event) == nil { forwardLive(event, user) }
        publishHere(event, to: user, skipping: skipping)
    }

    /// `publish` to this node's sockets only (what another node forwarded).
    func publishHere(_ event: BusEvent, to user: String, skipping: Set<String> = []) {
        guard let targets = endpoints[user] else { return }
        let conversationID = event.conversationID
        for endpoint in targets.values
        where !skipping.contains(endpoint.deviceID) && endpoint.listens(to: conversationID) && presence.isForeground(endpoint.deviceID) {
            endpoint.deliver(event)
        }
    }

    /// True when a socket of the device takes the conversation's events live.
    func isListening(deviceID: String, to conversationID: String) -> Bool {
        byDevice[deviceID]?.contains { $0.listens(to: conversationID) } ?? false
    }

    public func endpoints(of user: String) -> [DeviceEndpoint] {
        endpoints[user].map { Array($0.values) } ?? []
    }

    /// The device's newest live endpoint.
    public func newestEndpoint(ofDevice deviceID: String) -> DeviceEndpoint? { byDevice[deviceID]?.last }

    public var endpointCount: Int { endpoints.values.reduce(0) { $0 + $1.count } }

    /// The users and audiences with at least one socket here.
    var audiences: [String] { Array(endpoints.keys) }
}
