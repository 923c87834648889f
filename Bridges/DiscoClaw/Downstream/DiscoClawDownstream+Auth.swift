import Foundation
import RelayCore
import RelayTransport

extension DiscoClawDownstream {
    /// `POST /auth/register {name?, platform, setupToken}`: a new device (and user, unless
    /// `user_id` is set) with its bearer token. Every error value is a string.
    func register(_ body: [String: JSONValue], _ exchange: HTTPExchange) {
        guard let expected = settings.setupToken else {
            return exchange.respond(
                DiscoClawWire.error(403, "Registration is disabled. Set setup_token in [discoclaw] to allow devices to register.")
            )
        }
        guard registrations.allow("register", now: clock.nowMillis()) else {
            return exchange.respond(DiscoClawWire.error(429, "Too many registrations; try again in a minute"))
        }
        guard let presented = body["setupToken"]?.stringValue, Digest.sha256Hex(presented) == Digest.sha256Hex(expected) else {
            return exchange.respond(DiscoClawWire.error(401, "Invalid setup token"))
        }
        addDevice(body, userID: settings.userID ?? Identifiers.newUUID(), exchange) { device, token in
            .object(["userId": .string(device.userID), "deviceId": .string(device.id), "token": .string(token)])
        }
    }

    /// `POST /auth/devices {name, platform}`: another device of the caller's user.
    func addDevice(_ body: [String: JSONValue], for caller: Device, _ exchange: HTTPExchange) {
        guard registrations.allow("register", now: clock.nowMillis()) else {
            return exchange.respond(DiscoClawWire.error(429, "Too many registrations; try again in a minute"))
        }
        addDevice(body, userID: caller.userID, exchange) { device, token in .object(["deviceId": .string(device.id), "token": .string(token)]) }
    }

    private func addDevice(_ body: [String: JSONValue], userID: String, _ exchange: HTTPExchange, answer: @escaping (Device, String) -> JSONValue) {
        let name = body["name"]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines)
        let platform = body["platform"]?.stringValue ?? ""
        guard !platform.isEmpty, platform.utf8.count <= 32 else {
            return exchange.respond(DiscoClawWire.error(400, "platform is required (ios or macos)"))
        }
        guard (name?.utf8.count ?? 0) <= 64 else { return exchange.respond(DiscoClawWire.error(400, "name is longer than 64 bytes")) }
        let token = Self.newToken()
        let now = clock.nowMillis()
        let record = DeviceRecord(
            id: Identifiers.newUUID(),
            userID: userID,
            protocolName: "discoclaw",
            claimedName: name?.isEmpty == false ? name : nil,
            deviceInfoJSON: JSONValue.object(["platform": .string(platform)]).encoded(),
            isAdmin: false,
            status: .approved,
            tokenHash: Digest.sha256Hex(token),
            tokenDelivered: true,
            createdAt: now,
            lastSeenAt: now
        )
        let limit = settings.maxDevicesPerUser
        let request = DeviceSnapshot.Request(
            deviceID: record.id,
            countDevicesOf: DeviceSnapshot.UserDevices(userID: userID, protocolName: Self.protocolName)
        )
        hub.devices.update(request) { snapshot -> Bool in
            guard snapshot.userDeviceCount < limit else { return false }
            snapshot.device = record
            return true
        } completion: { [self] result in
            switch result {
            case .failure(let error): storeFailed(exchange, error)
            case .success(false): exchange.respond(DiscoClawWire.error(409, "This user already has \(limit) devices; remove one first"))
            case .success(true):
                registerPresence(record)
                logger.info("DiscoClaw device registered", metadata: ["device": "\(record.id)", "user": "\(userID)"])
                exchange.respond(DiscoClawWire.json(201, answer(Device(record), token)))
            }
        }
    }

    /// 32 random bytes as lowercase hex.
    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    func describe(_ device: Device, _ exchange: HTTPExchange) {
        var deviceFields: [String: JSONValue] = ["id": .string(device.id)]
        if let name = device.name { deviceFields["name"] = .string(name) }
        if let platform = device.platform { deviceFields["platform"] = .string(platform) }
        exchange.respond(DiscoClawWire.json(200, .object(["user": .object(["id": .string(device.userID)]), "device": .object(deviceFields)])))
    }

    /// `GET /auth/devices`: the user's devices, the caller marked `isCurrent`.
    func listDevices(for caller: Device, _ exchange: HTTPExchange) {
        let mine = hub.devices.bearerDevices(protocolName: Self.protocolName, userID: caller.userID).map(Device.init)
        let list = mine.map { device -> JSONValue in
            .object([
                "id": .string(device.id), "name": .string(device.name ?? ""), "platform": .string(device.platform ?? ""),
                "lastSeen": .int(device.lastSeen),
                "createdAt": .int(device.createdAt), "isCurrent": .bool(device.id == caller.id),
            ])
        }
        exchange.respond(DiscoClawWire.json(200, .object(["devices": .array(list)])))
    }

    /// `DELETE /auth/devices/:id`: revokes a device of the caller's user and closes its sockets.
    func removeDevice(_ id: String, for caller: Device, _ exchange: HTTPExchange) {
        guard let target = hub.devices.bearerDevices(protocolName: Self.protocolName, userID: caller.userID).first(where: { $0.id == id }) else {
            return exchange.respond(DiscoClawWire.notFound)
        }
        hub.devices.update(DeviceSnapshot.Request(deviceID: target.id)) { snapshot in
            snapshot.device?.status = .revoked
            snapshot.device?.tokenHash = nil
        } completion: { [self] result in
            if case .failure(let error) = result { return storeFailed(exchange, error) }
            closeSockets(of: id)
            logger.info("DiscoClaw device removed", metadata: ["device": "\(id)", "by": "\(caller.id)"])
            exchange.respond(DiscoClawWire.noContent)
        }
    }
}
