import RelayStore
import RelayTransport
import Synchronization

/// Counts every frame for `/metrics` and hands it to the audit log when one is configured.
final class AuditObserver: FrameObserver {
    private let audit: AuditLog?
    private(set) var framesIn = 0
    private(set) var framesOut = 0
    private(set) var bytesIn = 0
    private(set) var bytesOut = 0

    init(audit: AuditLog?) { self.audit = audit }

    func observe(_ record: FrameRecord) {
        if record.direction == .inbound {
            framesIn += 1
            bytesIn += record.size
        } else {
            framesOut += 1
            bytesOut += record.size
        }
        guard let audit else { return }
        audit.append(
            AuditEntry(
                timeMillis: record.timeMillis, connectionID: record.connectionID, protocolName: record.listener,
                direction: record.direction.rawValue, kind: record.kind.rawValue, deviceID: record.deviceID, userID: record.userID,
                opcode: record.opcode, size: record.size, body: ""),
            raw: record.body)
    }
}
