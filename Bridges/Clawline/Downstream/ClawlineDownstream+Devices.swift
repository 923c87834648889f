import RelayCore

extension ClawlineDownstream {
    /// Live sockets of the device follow its admin flag: they join or leave the admin channel and
    /// hear a new `user_info`.
    func follow(_ device: DeviceRecord) {
        for socket in sockets.values where socket.deviceID == device.id {
            perform(socket.machine.adminChanged(to: device.isAdmin), on: socket)
        }
    }

    /// Revokes or denylists a device now: its sockets close with `token_revoked`, its turns stop.
    func cutOff(deviceID: String) {
        for socket in sockets.values where socket.deviceID == deviceID {
            perform(socket.machine.revoked(), on: socket)
        }
        newest.removeValue(forKey: deviceID)
        hub.turns.abandon(deviceID: deviceID)
    }

    /// Forgets rate-limit history older than its window, so memory follows active devices only.
    func scheduleLimiterPruning() {
        loop.schedule(afterMillis: 60_000) { [weak self] in
            guard let self else { return }
            limiters.prune(now: clock.nowMillis())
            scheduleLimiterPruning()
        }
    }
}
