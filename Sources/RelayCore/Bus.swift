/// A live device of a user, in whatever protocol it speaks.
///
/// - Important: called on the loop thread.
public protocol DeviceEndpoint: AnyObject {
    var deviceID: String { get }
    func deliver(_ event: BusEvent)
}

/// Fans every event of a user out to all of that user's live devices.
///
/// Owned by the loop thread. Delivery order per endpoint is publish order.
public final class Bus {
    private var endpoints: [String: [ObjectIdentifier: DeviceEndpoint]] = [:]

    public init() {}

    public func register(_ endpoint: DeviceEndpoint, user: String) {
        endpoints[user, default: [:]][ObjectIdentifier(endpoint)] = endpoint
    }

    public func unregister(_ endpoint: DeviceEndpoint, user: String) {
        endpoints[user]?.removeValue(forKey: ObjectIdentifier(endpoint))
        if endpoints[user]?.isEmpty == true { endpoints.removeValue(forKey: user) }
    }

    public func publish(_ event: BusEvent, to user: String) {
        guard let targets = endpoints[user] else { return }
        for endpoint in targets.values { endpoint.deliver(event) }
    }

    public func endpoints(of user: String) -> [DeviceEndpoint] {
        endpoints[user].map { Array($0.values) } ?? []
    }

    public var endpointCount: Int { endpoints.values.reduce(0) { $0 + $1.count } }
}
