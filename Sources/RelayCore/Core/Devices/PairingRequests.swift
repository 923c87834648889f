import Logging

/// Pairing requests waiting for a decision, of every protocol: one book with one expiry, one
/// mirror for `clawrelay devices list` and one way for the operator or an admin to decide. A
/// protocol registers how it carries out a decision (`decide(for:_:)`) and hears expiries.
///
/// - Important: loop thread only.
public final class PairingRequests {
    /// A device waiting to be approved.
    public struct Request: Sendable, Equatable {
        public var requestID: String
        public var deviceID: String
        public var protocolName: String
        public var claimedName: String?
        /// What the protocol knows of the device (shown to whoever approves it, kept for the decision).
        public var info: JSONValue
        public var remoteAddress: String
        /// Why the device must be approved, in the protocol's words (`not-paired`, `scope-upgrade`), if it says.
        public var reason: String?
        public var createdAt: Int64
        public var expiresAt: Int64

        public init(
            requestID: String = Identifiers.newUUID(),
            deviceID: String,
            protocolName: String,
            claimedName: String?,
            info: JSONValue,
            remoteAddress: String,
            reason: String? = nil,
            createdAt: Int64 = 0,
            expiresAt: Int64 = 0
        ) {
            self.requestID = requestID
            self.deviceID = deviceID
            self.protocolName = protocolName
            self.claimedName = claimedName
            self.info = info
            self.remoteAddress = remoteAddress
            self.reason = reason
            self.createdAt = createdAt
            self.expiresAt = expiresAt
        }
    }

    /// What `admit` did.
    public enum Admission: Sendable, Equatable {
        /// A new request (or one that replaced the device's earlier one).
        case added(Request)
        /// The same request was waiting already.
        case pending(Request)
        /// The protocol holds as many requests as it may (in all, or from that address).
        case full
    }

    /// What bridges hear.
    public enum Event: Sendable, Equatable {
        case added(Request)
        /// Nobody decided in time.
        case expired(Request)
        /// Decided (by an admin, an operator client or the CLI); the protocol's decider carries it out.
        case decided(Request, approved: Bool)
    }

    /// What was decided about a request.
    public enum Decision: Sendable, Equatable {
        /// The device joins `userID` (nil: the protocol's choice).
        case approve(userID: String?)
        case deny
        /// The device was revoked while it waited (`Devices.revoke` stored it so): the client
        /// still waiting hears it is refused for good.
        case revoke

        public var approves: Bool { if case .approve = self { true } else { false } }
    }

    /// Carries out a decision: stores the device (and answers the client still waiting, if any);
    /// `completion` gets what the operator reads.
    public typealias Decider = (_ request: Request, _ decision: Decision, _ completion: @escaping (String) -> Void) -> Void

    private struct Entry {
        var request: Request
        var timer: TimerID
    }

    private let journal: DeviceJournal
    private let loop: any LoopScheduler
    private let clock: any Clock
    private let logger: Logger
    /// How the operator runs a `clawrelay` subcommand against this relay, e.g. "devices approve
    /// ID" → "clawrelay devices approve ID" (the server sets the binary's own path and data dir).
    public var operatorCommand: @Sendable (String) -> String = { "clawrelay \($0)" }
    private var entries: [String: Entry] = [:]
    private var deciders: [String: Decider] = [:]
    private var observers: [(Event) -> Void] = []

    init(journal: DeviceJournal, loop: any LoopScheduler, clock: any Clock, logger: Logger) {
        self.journal = journal
        self.loop = loop
        self.clock = clock
        self.logger = logger
    }

    /// The protocol's way to carry out decisions.
    public func decide(for protocolName: String, _ decider: @escaping Decider) { deciders[protocolName] = decider }

    public func observe(_ observer: @escaping (Event) -> Void) { observers.append(observer) }

    /// Holds `draft` for `ttlMillis` unless the protocol already holds `capacity` requests (or
    /// `perAddress` from its address). One request per device and protocol: the device's earlier
    /// one stays when `isSame` says the draft asks for the same thing, else the draft replaces it.
    public func admit(
        _ draft: Request,
        ttlMillis: Int,
        capacity: Int,
        perAddress: Int? = nil,
        isSame: (Request) -> Bool = { _ in true }
    ) -> Admission {
        if let existing = request(deviceID: draft.deviceID, protocolName: draft.protocolName) {
            if isSame(existing) { return .pending(existing) }
            remove(existing.requestID)
        }
        let held = entries.values.filter { $0.request.protocolName == draft.protocolName }
        if held.count >= capacity { return .full }
        if let perAddress, held.count(where: { $0.request.remoteAddress == draft.remoteAddress }) >= perAddress { return .full }
        var request = draft
        request.createdAt = clock.nowMillis()
        request.expiresAt = request.createdAt + Int64(ttlMillis)
        let requestID = request.requestID
        let timer = loop.schedule(afterMillis: ttlMillis) { [weak self] in self?.expire(requestID) }
        entries[requestID] = Entry(request: request, timer: timer)
        journal.savePendingPairing(
            PendingPairing(
                protocolName: request.protocolName,
                requestID: request.requestID,
                deviceID: request.deviceID,
                claimedName: request.claimedName,
                deviceInfoJSON: request.info.encoded(),
                reason: request.reason,
                createdAt: request.createdAt,
                expiresAt: request.expiresAt
            )
        )
        var metadata: Logger.Metadata = [
            "protocol": "\(request.protocolName)", "device": "\(request.deviceID)", "name": "\(request.claimedName ?? "")",
            "remote": "\(request.remoteAddress)", "approve_with": "\(operatorCommand("devices approve \(request.deviceID)"))",
        ]
        if let reason = request.reason { metadata["reason"] = "\(reason)" }
        logger.info("pairing request waiting for approval", metadata: metadata)
        publish(.added(request))
        return .added(request)
    }

    /// The waiting requests of one protocol (or all), oldest first.
    public func requests(protocolName: String? = nil) -> [Request] {
        entries.values.map(\.request).filter { protocolName == nil || $0.protocolName == protocolName }
            .sorted { ($0.createdAt, $0.requestID) < ($1.createdAt, $1.requestID) }
    }

    public func request(deviceID: String, protocolName: String) -> Request? {
        entries.values.first { $0.request.deviceID == deviceID && $0.request.protocolName == protocolName }?.request
    }

    public func request(id requestID: String) -> Request? { entries[requestID]?.request }

    public func count(protocolName: String) -> Int { entries.values.count { $0.request.protocolName == protocolName } }

    /// Decides the request with this request id, or the oldest of this device, through its
    /// protocol's decider; false when there is none.
    @discardableResult
    public func decide(_ idOrDeviceID: String, approve: Bool, userID: String?, completion: @escaping (String) -> Void) -> Bool {
        decide(idOrDeviceID, approve ? .approve(userID: userID) : .deny, completion: completion)
    }

    /// Decides the request with this request id, or the oldest of this device; false when there is none.
    @discardableResult
    public func decide(_ idOrDeviceID: String, _ decision: Decision, completion: @escaping (String) -> Void) -> Bool {
        guard let request = entries[idOrDeviceID]?.request ?? requests().first(where: { $0.deviceID == idOrDeviceID }) else { return false }
        remove(request.requestID)
        let verb =
            switch decision {
            case .approve: "pairing approved"
            case .deny: "pairing denied"
            case .revoke: "pairing refused: the device was revoked"
            }
        logger.info("\(verb)", metadata: ["protocol": "\(request.protocolName)", "device": "\(request.deviceID)"])
        publish(.decided(request, approved: decision.approves))
        if let decider = deciders[request.protocolName] {
            decider(request, decision, completion)
        } else {
            completion("no listener decides \(request.protocolName) pairings")
        }
        return true
    }

    /// Drops a request without a decision.
    public func withdraw(_ requestID: String) { remove(requestID) }

    private func expire(_ requestID: String) {
        guard let entry = entries[requestID] else { return }
        remove(requestID)
        publish(.expired(entry.request))
    }

    private func remove(_ requestID: String) {
        guard let entry = entries.removeValue(forKey: requestID) else { return }
        loop.cancel(entry.timer)
        journal.removePendingPairing(deviceID: entry.request.deviceID, protocolName: entry.request.protocolName)
    }

    private func publish(_ event: Event) {
        for observer in observers { observer(event) }
    }
}
