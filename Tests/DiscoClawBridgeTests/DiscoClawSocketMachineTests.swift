import DiscoClawWire
import RelayCore
import Testing

@testable import DiscoClawBridge

/// One socket's protocol on its own: core events in, the app's events (and closes, bus joins) out.
@Suite struct DiscoClawSocketMachineTests {
    typealias Machine = DiscoClawSocketMachine

    let turn = TurnRef(runID: "r1", deviceID: "phone", clientID: "C1")

    func open(running: [TurnProgress] = []) -> Machine {
        var machine = Machine()
        _ = machine.opened(as: ("phone", "u1"), running: running)
        return machine
    }

    func progress(_ text: String, answer: String = "a1", seq: Int64 = 11) -> BusEvent {
        .streaming(TurnProgress(turn: turn, eventID: answer, conversationID: "c1", content: text, startedAt: 1, seq: seq))
    }

    func final(_ text: String, answer: String = "a1", seq: Int64 = 12) -> BusEvent {
        .message(
            ChatEvent(
                id: answer,
                seq: seq,
                userID: "u1",
                conversationID: "c1",
                role: .assistant,
                content: text,
                timestampMillis: 5,
                deviceID: nil,
                attachmentsJSON: nil,
                turn: turn
            )
        )
    }

    func userMessage(from deviceID: String) -> BusEvent {
        .message(
            ChatEvent(
                id: "m1",
                seq: 10,
                userID: "u1",
                conversationID: "c1",
                role: .user,
                content: "hi",
                timestampMillis: 5,
                deviceID: deviceID,
                attachmentsJSON: nil,
                turn: turn
            )
        )
    }

    func delta(_ text: String, answer: String = "a1", seq: Int64 = 11) -> Machine.Effect { .send(.delta(answer, text, seq: seq, conversation: "c1")) }

    func updated(_ conversationID: String = "c1") -> Machine.Effect { .send(.conversationUpdated(.init(conversationId: conversationID))) }

    @Test func aSocketWhoseTokenNamesNoDeviceClosesWithInvalidToken() {
        var machine = Machine()
        #expect(machine.opened(as: nil, running: []) == [.close(.invalidToken)])
        #expect(machine.phase == .closed)
        #expect(machine.deliver(progress("x")).isEmpty && machine.closed().isEmpty, "it never joined the bus")
    }

    @Test func answersStillRunningComeFirstWithAllTheirTextThenTheSocketJoinsTheBus() {
        var machine = Machine()
        let running = TurnProgress(turn: turn, eventID: "a1", conversationID: "c1", content: "Hello wor", startedAt: 1, seq: 11)
        #expect(machine.opened(as: ("phone", "u1"), running: [running]) == [delta("Hello wor"), .attach(deviceID: "phone", userID: "u1")])
        #expect(machine.deliver(progress("Hello world")) == [delta("ld")], "then fragments from there")
        #expect(machine.deviceID == "phone" && machine.userID == "u1")
    }

    @Test func deltasAreFragmentsThatConcatenateToTheFinal() {
        var machine = open()
        #expect(machine.deliver(progress("He")) == [delta("He")])
        #expect(machine.deliver(progress("He")).isEmpty, "no growth, no delta")
        #expect(machine.deliver(progress("Hello")) == [delta("llo")])
        #expect(machine.deliver(progress("Jello")).isEmpty, "a rewrite is not a fragment: the complete carries it")
        #expect(
            machine.deliver(final("Hello!")) == [delta("!"), .send(.complete("a1", "Hello!", seq: 12, conversation: "c1"))],
            "the last progress was short of the final: the rest goes as one more delta, with the placeholder's seq"
        )
        #expect(machine.deliver(progress("x", answer: "a2", seq: 20)) == [delta("x", answer: "a2", seq: 20)])
    }

    @Test func aFragmentIsCutOnScalarBoundaries() {
        var machine = open()
        _ = machine.deliver(progress("caf"))
        #expect(machine.deliver(progress("café 🎉")) == [delta("é 🎉")])
    }

    @Test func otherDevicesMessagesAreAnnouncedAndTheSendersAreNot() {
        var machine = open()
        #expect(machine.deliver(userMessage(from: "phone")).isEmpty, "the sender learnt of it from its POST")
        #expect(machine.deliver(userMessage(from: "mac")) == [updated()])
        var plain = open()
        let outside = ChatEvent(
            id: "e9",
            seq: 30,
            userID: "u1",
            conversationID: "c2",
            role: .assistant,
            content: "bound",
            timestampMillis: 5,
            deviceID: nil,
            attachmentsJSON: nil
        )
        #expect(plain.deliver(.message(outside)) == [updated("c2")], "an assistant message outside a turn has no row yet: the app syncs")
    }

    @Test func aFailedTurnIsAMessageErrorOrASyncWhenItHadNoAnswer() {
        var machine = open()
        let failure = TurnFailure(turn: turn, conversationID: "c1", userID: "u1", cause: .failed, reason: "boom", timestampMillis: 5, answerID: "a1")
        #expect(machine.deliver(.turnFailed(failure)) == [.send(.error("a1", "boom", conversation: "c1"))])
        var early = failure
        early.answerID = nil
        #expect(machine.deliver(.turnFailed(early)) == [updated()])
    }

    @Test func toolsStartWithALabelAndEnd() {
        var machine = open()
        let bash = ToolActivity(id: "t1", name: "bash")
        #expect(
            machine.deliver(.tool(ToolProgress(turn: turn, eventID: "a1", conversationID: "c1", phase: .started, activity: bash)))
                == [.send(.toolStart(.init(messageId: "a1", tool: "bash", label: "bash")))]
        )
        #expect(
            machine.deliver(.tool(ToolProgress(turn: turn, eventID: "a1", conversationID: "c1", phase: .ended, activity: bash)))
                == [.send(.toolEnd(.init(messageId: "a1", tool: "bash")))]
        )
        #expect(machine.deliver(.assistantTyping(conversationID: "c1", active: true)).isEmpty, "the app has no typing event")
    }

    @Test func anAnswersEventsWaitForItsPostReplyThenGoInOrderAndAFinishedOneIsAnnouncedLater() {
        var machine = open()
        machine.hold(AnswerSlot(id: "a1", seq: 11), conversationID: "c1")
        #expect(machine.deliver(progress("Hi")).isEmpty)
        #expect(machine.deliver(progress("x", answer: "a2", seq: 9)) == [delta("x", answer: "a2", seq: 9)], "other answers do not wait")
        #expect(machine.deliver(userMessage(from: "mac")) == [updated()], "nor do announcements")
        #expect(machine.deliver(final("Hi!")).isEmpty)
        #expect(
            machine.release("a1") == [delta("Hi"), delta("!"), .send(.complete("a1", "Hi!", seq: 11, conversation: "c1"))],
            "it completes with its placeholder's seq, so the app's cursor stays short of the answer's own (12)"
        )
        #expect(machine.release("a1").isEmpty, "released once")
        #expect(
            machine.deliver(final("later", answer: "a2", seq: 30)) == [.send(.complete("a2", "later", seq: 11, conversation: "c1"))],
            "until it is announced, nothing moves the cursor past it"
        )
        #expect(machine.announce("a1") == [updated()], "the /sync this starts returns the answer")
        #expect(machine.announce("a1").isEmpty)
        #expect(machine.deliver(final("again", answer: "a3", seq: 40)) == [.send(.complete("a3", "again", seq: 40, conversation: "c1"))])
    }

    @Test func anAnnouncementWaitsForTheDevicesNewerMessagesAndNothingPassesTheOldestPlaceholder() {
        var machine = open()
        machine.hold(AnswerSlot(id: "a1", seq: 11), conversationID: "c1")
        #expect(machine.deliver(final("one", answer: "a1", seq: 12)).isEmpty)
        machine.hold(AnswerSlot(id: "a3", seq: 15), conversationID: "c2")
        #expect(machine.deliver(progress("other", answer: "a2", seq: 13)) == [delta("other", answer: "a2", seq: 11)])
        #expect(machine.deliver(final("x.", answer: "a3", seq: 16)).isEmpty)
        #expect(machine.release("a1") == [.send(.complete("a1", "one", seq: 11, conversation: "c1"))])
        #expect(machine.announce("a1").isEmpty, "a3's message is newer: a /sync now could return it before the app renamed its copy")
        #expect(machine.release("a3") == [.send(.complete("a3", "x.", seq: 11, conversation: "c1"))], "still capped by a1's placeholder")
        #expect(machine.announce("a3") == [updated("c1"), updated("c2")], "every message is old enough: both are announced")
        #expect(machine.deliver(progress("y", answer: "a4", seq: 20)) == [delta("y", answer: "a4", seq: 20)], "nothing pending: seqs as they are")
    }

    @Test func anAnswerStillRunningWhenReleasedStreamsOnAndIsNotAnnounced() {
        var machine = open()
        machine.hold(AnswerSlot(id: "a1", seq: 11), conversationID: "c1")
        #expect(machine.deliver(progress("Hi")).isEmpty)
        #expect(machine.release("a1") == [delta("Hi")])
        #expect(machine.deliver(final("Hi!")) == [delta("!"), .send(.complete("a1", "Hi!", seq: 12, conversation: "c1"))])
        #expect(machine.announce("a1").isEmpty)
    }

    @Test func aRevokedSocketClosesHearsNothingAndLeavesTheBusWhenGone() {
        var machine = open()
        machine.hold(AnswerSlot(id: "a1", seq: 11), conversationID: "c1")
        _ = machine.deliver(progress("Hi"))
        #expect(machine.revoke() == [.close(.deviceRevoked)])
        #expect(machine.revoke().isEmpty)
        #expect(machine.deliver(progress("Hi there")).isEmpty && machine.conversationChanged("c1").isEmpty && machine.release("a1").isEmpty)
        #expect(machine.closed() == [.detach(deviceID: "phone", userID: "u1")])
        #expect(machine.closed().isEmpty)
    }
}
