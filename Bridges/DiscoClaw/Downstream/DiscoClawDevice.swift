import DiscoClawWire
import Foundation
import RelayCore

/// A registered DiscoClaw device, as its bearer token finds it, and the pure rules of making one.
struct DiscoClawDevice: Equatable {
    /// What a device may call itself, at most (UTF-8 bytes).
    static let maxNameBytes = 64
    static let maxPlatformBytes = 32

    var id: String
    var userID: String
    var name: String?
    var platform: String?
    var createdAt: Int64
    var lastSeen: Int64

    init(_ record: DeviceRecord) {
        id = record.id
        userID = record.userID
        name = record.claimedName
        platform = record.deviceInfoJSON.flatMap { JSONValue.parse($0) }?["platform"]?.stringValue
        createdAt = record.createdAt
        lastSeen = record.lastSeenAt ?? record.createdAt
    }

    /// `GET /auth/me`.
    var me: DiscoClawMe { DiscoClawMe(user: .init(id: userID), device: .init(id: id, name: name, platform: platform)) }

    /// An item of `GET /auth/devices`, as `caller` lists it.
    func item(listedBy caller: DiscoClawDevice) -> DiscoClawDeviceList.Item {
        .init(id: id, name: name ?? "", platform: platform ?? "", lastSeen: lastSeen, createdAt: createdAt, isCurrent: id == caller.id)
    }

    /// The record of a new device of `userID` that `request` asks for, holding only the hash of
    /// `token`; or why it may not be made.
    static func record(
        for request: DiscoClawDeviceRequest,
        userID: String,
        token: String,
        id: String,
        now: Int64
    ) -> Result<DeviceRecord, DiscoClawError> {
        let name = request.name?.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let platform = request.platform, !platform.isEmpty, platform.utf8.count <= maxPlatformBytes else {
            return .failure(.platformRequired)
        }
        guard (name?.utf8.count ?? 0) <= maxNameBytes else { return .failure(.nameTooLong(maxBytes: maxNameBytes)) }
        return .success(
            DeviceRecord(
                id: id,
                userID: userID,
                protocolName: DiscoClawDownstream.protocolName,
                claimedName: name?.isEmpty == false ? name : nil,
                deviceInfoJSON: DiscoClawJSON.encode(Info(platform: platform)),
                isAdmin: false,
                status: .approved,
                tokenHash: Digest.sha256Hex(token),
                tokenDelivered: true,
                createdAt: now,
                lastSeenAt: now
            )
        )
    }

    /// What the relay keeps of the device's own description.
    private struct Info: Encodable {
        var platform: String
    }

    /// 32 random bytes as lowercase hex.
    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
