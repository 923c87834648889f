import RelayCore

extension ClawlineDownstream {
    /// Live sockets of the device follow its admin flag: they join or leave the admin channel and
    /// hear a new `user_info`.
    func follow(_ device: DeviceRecord) {
        for session in sessions.values where session.deviceID == device.id && session.phase == .live && session.isAdmin != device.isAdmin {
            setAdmin(device.isAdmin, on: session)
            session.send(ServerFrame.UserInfo(userId: device.userID, isAdmin: device.isAdmin))
        }
    }

    /// Forgets rate-limit history older than its window, so memory follows active devices only.
    func scheduleLimiterPruning() {
        loop.schedule(afterMillis: 60_000) { [weak self] in
            guard let self else { return }
            let now = clock.nowMillis()
            pairLimiter.prune(now: now)
            authLimiter.prune(now: now)
            messageLimiter.prune(now: now)
            typingLimiter.prune(now: now)
            oversizeLimiter.prune(now: now)
            scheduleLimiterPruning()
        }
    }
}
