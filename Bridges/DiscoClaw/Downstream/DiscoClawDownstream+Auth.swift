import DiscoClawWire
import Foundation
import RelayCore
import RelayTransport

extension DiscoClawDownstream {
    /// `POST /auth/register {name?, platform, setupToken}`: a new device (and user, unless
    /// `user_id` is set) with its bearer token. Every error value is a string.
    func register(_ request: DiscoClawDeviceRequest, _ exchange: HTTPExchange) {
        guard let expected = settings.setupToken else { return exchange.respond(DiscoClawReply.error(.registrationDisabled)) }
        guard registrations.allow("register", now: clock.nowMillis()) else { return exchange.respond(DiscoClawReply.error(.tooManyRegistrations)) }
        guard let presented = request.setupToken, Digest.sha256Hex(presented) == Digest.sha256Hex(expected) else {
            return exchange.respond(DiscoClawReply.error(.invalidSetupToken))
        }
        addDevice(request, userID: settings.userID ?? Identifiers.newUUID(), answersUser: true, exchange)
    }

    /// `POST /auth/devices {name, platform}`: another device of the caller's user.
    func addDevice(_ request: DiscoClawDeviceRequest, for caller: DiscoClawDevice, _ exchange: HTTPExchange) {
        guard registrations.allow("register", now: clock.nowMillis()) else { return exchange.respond(DiscoClawReply.error(.tooManyRegistrations)) }
        addDevice(request, userID: caller.userID, answersUser: false, exchange)
    }

    private func addDevice(_ request: DiscoClawDeviceRequest, userID: String, answersUser: Bool, _ exchange: HTTPExchange) {
        let token = DiscoClawDevice.newToken()
        let record: DeviceRecord
        switch DiscoClawDevice.record(for: request, userID: userID, token: token, id: Identifiers.newUUID(), now: clock.nowMillis()) {
        case .failure(let error): return exchange.respond(DiscoClawReply.error(error))
        case .success(let made): record = made
        }
        let limit = settings.maxDevicesPerUser
        let counted = DeviceSnapshot.Request(
            deviceID: record.id,
            countDevicesOf: DeviceSnapshot.UserDevices(userID: userID, protocolName: Self.protocolName)
        )
        hub.devices.update(counted) { snapshot -> Bool in
            guard snapshot.userDeviceCount < limit else { return false }
            snapshot.device = record
            return true
        } completion: { [self] result in
            switch result {
            case .failure(let error): storeFailed(exchange, error)
            case .success(false): exchange.respond(DiscoClawReply.error(.tooManyDevices(limit: limit)))
            case .success(true):
                registerPresence(record)
                logger.info("DiscoClaw device registered", metadata: ["device": "\(record.id)", "user": "\(userID)"])
                if answersUser {
                    // A registration's answer names the device it made (`POST /auth/devices` keeps the caller's).
                    exchange.deviceID = record.id
                    exchange.userID = userID
                }
                let registration = DiscoClawRegistration(userId: answersUser ? userID : nil, deviceId: record.id, token: token)
                exchange.respond(DiscoClawReply.json(201, registration))
            }
        }
    }

    /// `GET /auth/devices`: the user's devices, the caller marked `isCurrent`.
    func listDevices(for caller: DiscoClawDevice, _ exchange: HTTPExchange) {
        let mine = hub.devices.bearerDevices(protocolName: Self.protocolName, userID: caller.userID).map(DiscoClawDevice.init)
        exchange.respond(DiscoClawReply.json(200, DiscoClawDeviceList(devices: mine.map { $0.item(listedBy: caller) })))
    }

    /// `DELETE /auth/devices/:id`: revokes a device of the caller's user and closes its sockets.
    func removeDevice(_ id: String, for caller: DiscoClawDevice, _ exchange: HTTPExchange) {
        guard let target = hub.devices.bearerDevices(protocolName: Self.protocolName, userID: caller.userID).first(where: { $0.id == id }) else {
            return exchange.respond(DiscoClawReply.error(.notFound))
        }
        hub.devices.update(DeviceSnapshot.Request(deviceID: target.id)) { snapshot in
            snapshot.device?.status = .revoked
            snapshot.device?.tokenHash = nil
        } completion: { [self] result in
            if case .failure(let error) = result { return storeFailed(exchange, error) }
            closeSockets(of: id)
            logger.info("DiscoClaw device removed", metadata: ["device": "\(id)", "by": "\(caller.id)"])
            exchange.respond(DiscoClawReply.noContent)
        }
    }
}
