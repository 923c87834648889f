import Foundation
import RelayCore
import Testing

@testable import RelayStore

/// The SQLite journal's device changes: a snapshot read, changed by a pure function and stored
/// whole on the writer; reads of it on the reader.
@Suite struct DeviceJournalStoreTests {
    /// Runs `body` with a journal over a fresh store, waiting for completions on a queue loop.
    private func withJournal(_ body: (StoreJournal) async throws -> Void) async throws {
        let directory = NSTemporaryDirectory() + "clawrelay-devices-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(dataDirectory: directory, executor: QueueLoop())
        defer { store.close() }
        try await body(StoreJournal(store: store) { _, _ in })
    }

    private func update<R: Sendable>(
        _ journal: StoreJournal,
        _ request: DeviceSnapshot.Request,
        _ change: @escaping @Sendable (inout DeviceSnapshot) throws -> R
    ) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            journal.updateDevice(request, change) { continuation.resume(with: $0) }
        }
    }

    private func device(_ journal: StoreJournal, _ id: String) async throws -> DeviceRecord? {
        try await withCheckedThrowingContinuation { continuation in journal.device(id: id) { continuation.resume(with: $0) } }
    }

    /// An approved device (also for other suites of the store).
    static func record(_ id: String, admin: Bool = false) -> DeviceRecord {
        DeviceRecord(
            id: id,
            userID: "u",
            protocolName: "gateway",
            claimedName: nil,
            deviceInfoJSON: nil,
            isAdmin: admin,
            status: .approved,
            tokenHash: nil,
            tokenDelivered: false,
            createdAt: 1,
            lastSeenAt: nil
        )
    }

    @Test func aChangeStoresTheRecordTokensAndBotsAndTheReaderSeesThem() async throws {
        try await withJournal { journal in
            let first = try await update(journal, DeviceSnapshot.Request(deviceID: "d1", adminExists: true)) { snapshot -> Bool in
                let hadAdmin = snapshot.adminExists
                snapshot.device = Self.record("d1", admin: true)
                snapshot.tokens["operator"] = DeviceToken(deviceID: "d1", role: "operator", tokenHash: "h1", scopes: ["operator.read"], issuedAt: 5)
                snapshot.bots["echo"] = "b1"
                return hadAdmin
            }
            #expect(first == false)
            let second = try await update(journal, DeviceSnapshot.Request(deviceID: "d1", adminExists: true)) { snapshot -> DeviceSnapshot in
                let seen = snapshot
                snapshot.tokens.removeValue(forKey: "operator")
                snapshot.bots = [:]
                return seen
            }
            #expect(second.adminExists && second.device?.isAdmin == true)
            #expect(second.tokens["operator"]?.scopes == ["operator.read"] && second.bots == ["echo": "b1"])
            let third = try await update(journal, DeviceSnapshot.Request(deviceID: "d1")) { $0 }
            #expect(third.tokens.isEmpty && third.bots.isEmpty, "roles and bots taken out are deleted")
            #expect(try await device(journal, "d1")?.isAdmin == true)
            #expect(try await device(journal, "nobody") == nil)
        }
    }

    @Test func aFailingChangeStoresNothing() async throws {
        try await withJournal { journal in
            await #expect(throws: Boom.self) {
                try await update(journal, DeviceSnapshot.Request(deviceID: "d2")) { snapshot -> Void in
                    snapshot.device = Self.record("d2")
                    throw Boom()
                }
            }
            let stored = try await device(journal, "d2")
            #expect(stored == nil)
        }
    }

    @Test func aPairingLinkIsUsableOnceAndCountsOnlyWhenConsumed() async throws {
        try await withJournal { journal in
            let hash = Digest.sha256Hex("link")
            try journal.store.write { try PairingLinkQueries.addLink($0, tokenHash: hash, expiresAt: Int64.max) }
            let request = DeviceSnapshot.Request(deviceID: "d3", pairLinkHash: hash)
            #expect(try await update(journal, request) { $0.pairLinkUsable }, "reading does not use it")
            #expect(
                try await update(journal, request) { snapshot -> Bool in
                    snapshot.consumesPairLink = true
                    return snapshot.pairLinkUsable
                }
            )
            #expect(try await update(journal, request) { $0.pairLinkUsable } == false)
        }
    }

    @Test func devicesOfAUserAreCountedByProtocol() async throws {
        try await withJournal { journal in
            for id in ["a", "b"] { _ = try await update(journal, DeviceSnapshot.Request(deviceID: id)) { $0.device = Self.record(id) } }
            let request = DeviceSnapshot.Request(deviceID: "c", countDevicesOf: DeviceSnapshot.UserDevices(userID: "u", protocolName: "gateway"))
            #expect(try await update(journal, request) { $0.userDeviceCount } == 2)
        }
    }
}
