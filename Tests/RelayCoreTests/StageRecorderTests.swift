import RelayCore
import RelayTesting
import Testing

/// A device socket that writes finals later, as a bridge does: it takes the final's delivery
/// while the core publishes and reports the write on `flush()`.
final class FinalWritingEndpoint: DeviceEndpoint {
    let deviceID: String
    let stages: StageRecorder
    private var unwritten: [FinalDelivery] = []

    init(deviceID: String, stages: StageRecorder) {
        self.deviceID = deviceID
        self.stages = stages
    }

    func deliver(_ event: BusEvent) {
        if case .message = event, let delivery = stages.finalWrite() { unwritten.append(delivery) }
    }

    func flush() {
        let written = unwritten
        unwritten = []
        for delivery in written { delivery.written() }
    }
}

@Suite struct StageRecorderTests {
    func counts(_ stages: StageRecorder) -> [MessageStage: UInt64] {
        Dictionary(uniqueKeysWithValues: MessageStage.allCases.map { ($0, stages.histogram($0).count) })
    }

    @Test func unstampedOrBackwardStretchesCountNothing() {
        let stages = StageRecorder()
        stages.record(.receivedToSubmitted, from: 0, to: 500)
        stages.record(.receivedToSubmitted, from: 900, to: 800)
        #expect(stages.histogram(.receivedToSubmitted).count == 0)
        stages.record(.receivedToSubmitted, from: 800, to: 900)
        stages.record(.receivedToSubmitted, from: 800, to: 800)
        #expect(stages.histogram(.receivedToSubmitted).count == 2)
        #expect(stages.histogram(.receivedToSubmitted).sumNanos == 100)
        #expect(stages.finalWrite() == nil, "no final is being published")
    }

    @Test func aTurnPassesEachCoreStageOnceAndTheFinalCountsAfterTheLastDeviceWroteIt() {
        let core = CoreFixture()
        let phone = FinalWritingEndpoint(deviceID: "phone", stages: core.hub.stages)
        let laptop = FinalWritingEndpoint(deviceID: "laptop", stages: core.hub.stages)
        core.hub.attach(phone, socket: 1, userID: core.user, protocolName: "test", delivery: .replay)
        core.hub.attach(laptop, socket: 2, userID: core.user, protocolName: "test", delivery: .replay)
        var message = core.message("hi", device: "phone")
        message.receivedAt = MonotonicClock.nanos()
        #expect(core.submit(message).isAccepted)
        core.emit(.progress("echo"), run: 0)
        core.emit(.progress("echo: hi"), run: 0)
        core.emit(.final("echo: hi"), run: 0)
        let core1: [MessageStage] = [
            .receivedToSubmitted, .submittedToCommitted, .committedToTurnStarted, .turnStartedToFirstProgress, .firstProgressToFinal,
            .finalToCommitted,
        ]
        var expected = Dictionary(uniqueKeysWithValues: MessageStage.allCases.map { ($0, UInt64(core1.contains($0) ? 1 : 0)) })
        #expect(counts(core.hub.stages) == expected, "the memory journal has no writer stamps; acks are the bridge's")
        phone.flush()
        #expect(counts(core.hub.stages) == expected, "the laptop has not written it yet")
        laptop.flush()
        expected[.finalCommittedToWritten] = 1
        expected[.receivedToFinalWritten] = 1
        #expect(counts(core.hub.stages) == expected)
    }

    @Test func retriesUnstampedMessagesAndFinalsNoDeviceTookCountOnlyWhatTheyPassed() {
        let core = CoreFixture()
        #expect(core.submit(core.message("hi", device: "phone", clientID: "c_1")).isAccepted)
        _ = core.submit(core.message("hi", device: "phone", clientID: "c_1"))
        core.emit(.final("done"), run: 0)
        let stages = core.hub.stages
        #expect(stages.histogram(.submittedToCommitted).count == 1, "the duplicate is not a new message")
        #expect(stages.histogram(.receivedToSubmitted).count == 0, "its bridge did not stamp the frame")
        #expect(stages.histogram(.turnStartedToFirstProgress).count == 0, "no progress came")
        #expect(stages.histogram(.firstProgressToFinal).count == 0)
        #expect(stages.histogram(.finalToCommitted).count == 1)
        #expect(stages.histogram(.finalCommittedToWritten).count == 0, "no device took it live")
    }
}
