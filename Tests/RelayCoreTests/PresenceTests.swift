import RelayCore
import Testing

@Suite struct PresenceTests {
    @Test func aSocketMakesADeviceForegroundAndLosingTheLastOneMakesItOffline() {
        var presence = DevicePresence(now: 0)
        #expect(presence.state == .offline)
        #expect(presence.apply(.connected(socket: 1), now: 1) == .foreground)
        #expect(presence.apply(.connected(socket: 2), now: 2) == nil)
        #expect(presence.apply(.disconnected(socket: 1), now: 3) == nil, "one socket is still open")
        #expect(presence.apply(.disconnected(socket: 2), now: 4) == .offline)
        #expect(presence.since == 4)
    }

    @Test func aBackgroundedDeviceStaysBackgroundWithoutASocketUntilItExpires() {
        var presence = DevicePresence(now: 0)
        presence.apply(.connected(socket: 1), now: 0)
        #expect(presence.apply(.backgrounded, now: 10) == .background)
        #expect(presence.apply(.disconnected(socket: 1), now: 20) == nil)
        #expect(presence.state == .background)
        #expect(presence.expire(now: 100, ttlMillis: 1_000) == nil)
        #expect(presence.expire(now: 1_010, ttlMillis: 1_000) == .offline)
    }

    @Test func foregroundNeedsASocket() {
        var presence = DevicePresence(now: 0)
        presence.apply(.connected(socket: 1), now: 0)
        presence.apply(.backgrounded, now: 1)
        presence.apply(.disconnected(socket: 1), now: 2)
        #expect(presence.apply(.foregrounded, now: 3) == nil, "nothing could receive live events")
        #expect(presence.apply(.connected(socket: 2), now: 4) == .foreground, "a new socket is the app in use")
        presence.apply(.backgrounded, now: 5)
        #expect(presence.apply(.foregrounded, now: 6) == .foreground)
    }

    @Test func aBackgroundDeviceWithASocketDoesNotExpire() {
        var presence = DevicePresence(now: 0)
        presence.apply(.connected(socket: 1), now: 0)
        presence.apply(.backgrounded, now: 0)
        #expect(presence.expire(now: 10_000, ttlMillis: 1) == nil)
    }

    @Test func anUnknownSocketClosingChangesNothing() {
        var presence = DevicePresence(now: 0)
        presence.apply(.connected(socket: 1), now: 0)
        #expect(presence.apply(.disconnected(socket: 9), now: 1) == nil)
        #expect(presence.state == .foreground)
    }

    @Test func theHubCountsDevicesPerStateAndRecordsChanges() {
        let core = CoreFixture()
        let (_, socket) = core.connect("phone")
        core.connect("laptop")
        core.hub.presence.signal(.backgrounded, deviceID: "laptop")
        #expect(core.hub.presence.counts == [.foreground: 1, .background: 1, .offline: 0])
        core.hub.detach(RecordingEndpoint(deviceID: "phone"), socket: socket, userID: core.user)
        #expect(core.journal.presence == ["phone": .offline, "laptop": .background])
    }
}
