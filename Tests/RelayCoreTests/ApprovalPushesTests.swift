import RelayCore
import RelayTesting
import Testing

@Suite struct ApprovalPushesTests {
    let core = CoreFixture()
    let sinks = RecordingDispatcher()

    init() {
        let apns = PushTarget(deviceID: "phone", kind: .apns, token: String(repeating: "ab", count: 32), registeredAt: 0)
        core.journal.pushDevices = [PushDevice(deviceID: "phone", userID: core.user, protocolName: "test", targets: [apns])]
        core.hub.pushes.enable(dispatcher: sinks, settings: Pushes.Settings(delayMillis: 5_000))
        core.loop.runUntilIdle()
        core.connect("laptop")
        core.connect("phone")
        core.hub.presence.signal(.backgrounded, deviceID: "phone")
    }

    /// The laptop's turn asks `touch x`.
    func ask() -> Approval {
        core.submit(core.message("make x", device: "laptop"))
        core.emit(ApprovalsTests.bash("touch x"), run: 0)
        return core.hub.approvals.pending(userID: core.user)[0]
    }

    func decide(_ approval: Approval) {
        core.hub.approvals.decide(approval.id, userID: core.user, decision: .allowOnce, deviceID: "laptop") { _ in }
        core.loop.runUntilIdle()
    }

    @Test func anAwayDeviceIsAskedByPushAfterTheDelayAndNotForTheNote() throws {
        let approval = ask()
        core.loop.advance(millis: 4_999)
        #expect(sinks.deliveries.isEmpty, "the note is no answer: no push of its own")
        core.loop.advance(millis: 1)
        let delivery = try #require(sinks.deliveries.first)
        #expect(sinks.deliveries.count == 1)
        #expect(delivery.content.title == "Approval needed" && delivery.content.body == "Claude Code wants to run Bash: touch x")
        #expect(delivery.push.kind == .approvalRequested && delivery.push.approval?.id == approval.id)
        #expect(delivery.push.eventName == "approval.requested")
        #expect(delivery.content.custom["clawrelay"]?["approvalId"]?.stringValue == approval.id)
        #expect(core.journal.pendingPushes.isEmpty, "approval pushes are not stored: approvals do not outlive the relay")
    }

    @Test func resolvedBeforeItIsDueItIsNeverSent() {
        let approval = ask()
        core.loop.advance(millis: 2_000)
        decide(approval)
        core.loop.advance(millis: 10_000)
        #expect(sinks.deliveries.isEmpty)
    }

    @Test func resolvedAfterItWentOutASilentPushClearsIt() throws {
        let approval = ask()
        core.loop.advance(millis: 5_000)
        decide(approval)
        #expect(sinks.deliveries.count == 2)
        let resolved = try #require(sinks.deliveries.last)
        #expect(resolved.content.silent && resolved.push.kind == .approvalResolved && resolved.push.eventName == "approval.resolved")
        #expect(resolved.device.targets.allSatisfy { $0.kind == .apns })
    }

    @Test func aDeviceThatWatchesTheConversationLiveGetsNoPush() {
        core.hub.presence.signal(.foregrounded, deviceID: "phone")
        _ = ask()
        core.loop.advance(millis: 10_000)
        #expect(sinks.deliveries.isEmpty)
    }
}
