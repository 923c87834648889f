/// What `/metrics` counts, counted where it happens and labeled by the protocol of the device it
/// happened for (the one presence knows it by; `unknown` for a device presence never saw).
///
/// - Important: loop thread only.
public final class RelayCounters {
    private let presence: Presence
    /// Client messages made durable and acknowledged, by protocol.
    public private(set) var acceptedMessages: [String: Int] = [:]
    /// Devices whose user is typing now, by protocol (set by the bridges that carry user typing).
    public private(set) var typingDevices: [String: Int] = [:]

    /// Runs that reported what they cost, and the dollars they reported, by backend.
    public private(set) var reportedRuns: [String: Int] = [:]
    public private(set) var costUSD: [String: Double] = [:]

    init(presence: Presence) { self.presence = presence }

    func reported(_ report: TurnReport, backend: String) {
        reportedRuns[backend, default: 0] += 1
        if let cost = report.costUSD, cost.isFinite, cost >= 0 { costUSD[backend, default: 0] += cost }
    }

    /// The protocol a device speaks, as presence knows it.
    public func protocolName(ofDevice deviceID: String) -> String { presence.entries[deviceID]?.protocolName ?? "unknown" }

    func accepted(deviceID: String) { acceptedMessages[protocolName(ofDevice: deviceID), default: 0] += 1 }

    /// A bridge reports how many of its devices' users are typing now.
    public func typing(_ count: Int, protocolName: String) { typingDevices[protocolName] = count }
}
