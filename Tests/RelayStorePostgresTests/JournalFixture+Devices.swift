import Logging
import PostgresNIO
import RelayCore

@testable import RelayStorePostgres

/// Calls the device, push and usage tests share.
extension JournalFixture {
    /// Runs `work` on the writer's connection after everything submitted before it (reads of what
    /// the journal wrote, and the plain query functions no protocol calls yet).
    func run<R: Sendable>(_ work: @escaping @Sendable (PostgresConnection, Logger) async throws -> R) async throws -> R {
        try await awaiting { journal.perform("test", work, completion: $0) }
    }

    /// `updateDevice`, awaited.
    func update<R: Sendable>(_ request: DeviceSnapshot.Request, _ change: @escaping @Sendable (inout DeviceSnapshot) throws -> R) async throws -> R {
        try await awaiting { journal.updateDevice(request, change, completion: $0) }
    }

    /// Stores `record` through `updateDevice`.
    func store(_ record: DeviceRecord) async throws {
        try await update(DeviceSnapshot.Request(deviceID: record.id)) { $0.device = record }
    }

    func device(_ id: String) async throws -> DeviceRecord? {
        try await awaiting { journal.device(id: id, completion: $0) }
    }

    /// Waits for every write submitted before it (those nobody waits for included).
    func settle() async {
        await awaitingDone { journal.barrier($0) }
    }
}

/// A device record as the tests store it: approved, of user "u", speaking `protocolName`.
func deviceRecord(_ id: String, user: String = "u", protocolName: String = "gateway", admin: Bool = false, createdAt: Int64 = 1) -> DeviceRecord {
    DeviceRecord(
        id: id,
        userID: user,
        protocolName: protocolName,
        claimedName: nil,
        deviceInfoJSON: nil,
        isAdmin: admin,
        status: .approved,
        tokenHash: nil,
        tokenDelivered: false,
        createdAt: createdAt,
        lastSeenAt: nil
    )
}

/// The error a test's change throws.
struct Refused: Error {}
