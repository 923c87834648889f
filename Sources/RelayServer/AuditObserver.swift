import RelayStore
import RelayTransport
import Synchronization

/// Counts every frame for `/metrics` and hands it to the audit log when one is configured.
final class AuditObserver: FrameObserver {
    private let audit: AuditLog?
    /// Listeners counted but not audited (the admin listener unless `[audit] admin`).
    private let unaudited: Set<String>
    private(set) var framesIn = 0
    private(set) var framesOut = 0
    private(set) var bytesIn = 0
    private(set) var bytesOut = 0

    init(audit: AuditLog?, unaudited: Set<String> = []) {
        self.audit = audit
        self.unaudited = unaudited
    }

    func observe(_ record: FrameRecord) {
        if record.direction == .inbound {
            framesIn += 1
            bytesIn += record.size
        } else {
            framesOut += 1
            bytesOut += record.size
        }
        guard let audit, !unaudited.contains(record.listener) else { return }
        audit.append(
            AuditEntry(
                timeMillis: record.timeMillis,
                connectionID: record.connectionID,
                protocolName: record.listener,
                direction: record.direction.rawValue,
                kind: record.kind.rawValue,
                deviceID: record.deviceID,
                userID: record.userID,
                opcode: record.opcode,
                size: record.size,
                body: ""
            ),
            raw: record.body
        )
    }
}
