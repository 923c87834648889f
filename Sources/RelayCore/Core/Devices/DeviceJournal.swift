/// The durable side of devices: records, per-role tokens, bot pairings, pairing links, the
/// mirror of pending pairing requests, last seen. RelayStore implements it over SQLite, RelayTesting
/// in memory.
///
/// - Important: called on the loop; completions run later on the loop. Reads run on a reader
///   (they see every write whose completion already ran); `updateDevice` runs on the writer.
public protocol DeviceJournal: AnyObject {
    /// A device by id, nil when unknown.
    func device(id: String, completion: @escaping (Result<DeviceRecord?, any Error>) -> Void)
    /// The device of `protocolName` whose bearer token (`DeviceRecord.tokenHash`) has this
    /// SHA-256, nil when none: a cluster node's read of a device paired through another node.
    func device(tokenHash: String, protocolName: String, completion: @escaping (Result<DeviceRecord?, any Error>) -> Void)
    /// Every device, or those of one protocol, oldest first.
    func devices(protocolName: String?, completion: @escaping (Result<[DeviceRecord], any Error>) -> Void)
    /// Reads the snapshot `request` names, runs `change` on it, and stores what it changed, in
    /// one transaction; `change` runs on the writer's thread and must only compute.
    func updateDevice<R: Sendable>(
        _ request: DeviceSnapshot.Request,
        _ change: @escaping @Sendable (inout DeviceSnapshot) throws -> R,
        completion: @escaping (Result<R, any Error>) -> Void
    )
    /// Stores when devices were last seen; nobody waits.
    func recordSeen(_ seen: [String: Int64])
    /// Mirrors a pending pairing request (one row per device and protocol) for `clawrelay devices list`.
    func savePendingPairing(_ pairing: PendingPairing)
    func removePendingPairing(deviceID: String, protocolName: String)
}
