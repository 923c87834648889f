import CAvahi
import Foundation
import Logging
import Synchronization

/// Advertises DNS-SD services through the system's Avahi daemon (over D-Bus).
///
/// `@unchecked Sendable` holds because the Avahi objects are touched only from Avahi's own poll
/// thread (its callbacks) and from `start`/`stop`, which hold the threaded poll's lock.
public final class MDNSAdvertiser: @unchecked Sendable {
    public struct Service: Sendable {
        public var name: String
        public var type: String
        public var port: Int
        public var txt: [String]

        public init(name: String, type: String, port: Int, txt: [String]) {
            self.name = name
            self.type = type
            self.port = port
            self.txt = txt
        }
    }

    private let services: [Service]
    private let logger: Logger
    private var poll: OpaquePointer?
    private var client: OpaquePointer?
    private var group: OpaquePointer?

    public init(services: [Service], logger: Logger) {
        self.services = services
        self.logger = logger
    }

    /// Connects to the Avahi daemon; the services are published once it reports running.
    public func start() throws {
        guard let poll = avahi_threaded_poll_new() else { throw DiscoveryError("avahi: cannot create a poll") }
        self.poll = poll
        var error: Int32 = 0
        let context = Unmanaged.passUnretained(self).toOpaque()
        client = avahi_client_new(avahi_threaded_poll_get(poll), AvahiClientFlags(0), avahiClientChanged, context, &error)
        guard client != nil else {
            avahi_threaded_poll_free(poll)
            self.poll = nil
            throw DiscoveryError("avahi: \(String(cString: avahi_strerror(error))) (is avahi-daemon running?)")
        }
        avahi_threaded_poll_start(poll)
    }

    public func stop() {
        guard let poll else { return }
        avahi_threaded_poll_stop(poll)
        if let client { avahi_client_free(client) }
        avahi_threaded_poll_free(poll)
        self.poll = nil
        client = nil
        group = nil
    }

    deinit { stop() }

    /// Avahi's thread: the daemon is up, so register the services.
    fileprivate func clientChanged(_ client: OpaquePointer?, _ state: AvahiClientState) {
        guard state == AVAHI_CLIENT_S_RUNNING, group == nil, let client else {
            if state == AVAHI_CLIENT_FAILURE { logger.warning("mDNS: the Avahi daemon went away") }
            return
        }
        guard let group = avahi_entry_group_new(client, nil, nil) else { return logger.warning("mDNS: cannot create an entry group") }
        self.group = group
        for service in services {
            var list: UnsafeMutablePointer<AvahiStringList>?
            for entry in service.txt { list = avahi_string_list_add(list, entry) }
            let result = avahi_entry_group_add_service_strlst(
                group,
                AvahiIfIndex(AVAHI_IF_UNSPEC),
                AvahiProtocol(AVAHI_PROTO_UNSPEC),
                AvahiPublishFlags(0),
                service.name,
                service.type,
                nil,
                nil,
                UInt16(service.port),
                list
            )
            avahi_string_list_free(list)
            if result < 0 { logger.warning("mDNS: cannot add \(service.type): \(String(cString: avahi_strerror(result)))") }
        }
        avahi_entry_group_commit(group)
        logger.info("mDNS: advertising", metadata: ["services": "\(services.map(\.type).joined(separator: ","))"])
    }
}

private func avahiClientChanged(_ client: OpaquePointer?, _ state: AvahiClientState, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<MDNSAdvertiser>.fromOpaque(context).takeUnretainedValue().clientChanged(client, state)
}

public struct DiscoveryError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}
