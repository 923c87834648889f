import RelayCore
import RelayTesting
import Testing

@Suite struct ReadCursorsTests {
    /// Every change observers heard, in order.
    final class Heard {
        var changes: [ConversationChange] = []
        var reads: [ReadCursor] { changes.compactMap { if case .read(let cursor) = $0 { cursor } else { nil } } }
        var conversations: [Conversation] {
            changes.compactMap {
                switch $0 {
                case .created(let conversation), .conversation(let conversation): conversation
                default: nil
                }
            }
        }
    }

    func listening(_ core: CoreFixture) -> Heard {
        let heard = Heard()
        core.hub.changes.observe { heard.changes.append($0) }
        return heard
    }

    /// One answered turn from `device`; returns (user message, answer).
    func turn(_ core: CoreFixture, _ text: String, device: String, conversation: Conversation? = nil) -> (ChatEvent, ChatEvent) {
        guard case .accepted(let sent, _, _) = core.submit(core.message(text, device: device, conversation: conversation)) else {
            Issue.record("not accepted")
            return (ChatEvent.empty, ChatEvent.empty)
        }
        core.emit(.final("echo \(text)"), run: core.backend.runs.count - 1)
        let answer = core.journal.events.last { $0.conversationID == sent.conversationID && $0.role == .assistant }
        return (sent, answer ?? ChatEvent.empty)
    }

    @Test func sendingAMessageMovesTheSendersCursorToIt() {
        let core = CoreFixture()
        core.connect("phone")
        let (sent, answer) = turn(core, "hello", device: "phone")
        #expect(core.journal.cursor(userID: core.user, conversationID: core.conversation.id) == sent.seq, "one's own message is read")
        #expect(answer.seq > sent.seq, "the answer comes after it: unread until someone reads it")
    }

    @Test func aReadOnAnyDeviceMovesTheUsersCursorForwardOnlyAndObserversHearIt() {
        let core = CoreFixture()
        core.connect("phone")
        core.connect("laptop")
        let (_, first) = turn(core, "one", device: "phone")
        let (_, second) = turn(core, "two", device: "phone")
        let heard = listening(core)

        core.hub.read(deviceID: "laptop", conversationID: core.conversation.id, seq: second.seq)
        core.loop.runUntilIdle()
        #expect(core.journal.cursor(userID: core.user, conversationID: core.conversation.id) == second.seq)
        #expect(heard.reads.map(\.seq) == [second.seq] && heard.reads.first?.userID == core.user, "the cursor is the user's, not the device's")

        core.hub.read(deviceID: "phone", conversationID: core.conversation.id, seq: first.seq)
        core.loop.runUntilIdle()
        #expect(core.journal.cursor(userID: core.user, conversationID: core.conversation.id) == second.seq, "a cursor never moves back")
        #expect(heard.reads.count == 1, "nothing moved, nothing to hear")

        core.hub.read(deviceID: "unknown-device", conversationID: core.conversation.id, seq: second.seq + 100)
        core.loop.runUntilIdle()
        #expect(heard.reads.count == 1, "a device the core does not know reads nothing")
    }

    @Test func aReadPastTheNewestEventIsClampedAndTheCompletionTellsWhetherItMoved() {
        let core = CoreFixture()
        core.connect("phone")
        let (_, answer) = turn(core, "one", device: "phone")
        var results: [ReadCursor?] = []
        core.hub.read(userID: core.user, conversationID: core.conversation.id, seq: answer.seq + 50) { results.append(try? $0.get()) }
        core.hub.read(userID: core.user, conversationID: core.conversation.id, seq: answer.seq) { results.append(try? $0.get()) }
        core.loop.runUntilIdle()
        #expect(results.count == 2)
        #expect(results.first??.seq == answer.seq, "clamped to the newest event")
        #expect(results.last == .some(nil), "already there")

        let empty = core.resolve(.session("empty"))
        var emptyResult: ReadCursor??
        core.hub.read(userID: core.user, conversationID: empty.id, seq: 10) { emptyResult = try? $0.get() }
        core.loop.runUntilIdle()
        #expect(emptyResult == .some(nil), "a conversation without events has nothing to read")
    }

    @Test func aDrainedQueueIsReadByItsUser() {
        let core = CoreFixture()
        core.connect("phone")
        let (tablet, _) = core.connect("tablet", delivery: NotificationQueueTests.queued)
        core.hub.presence.signal(.backgrounded, deviceID: "tablet")
        let (_, answer) = turn(core, "while away", device: "phone")
        #expect(core.journal.cursor(userID: core.user, conversationID: core.conversation.id) < answer.seq)
        let heard = listening(core)
        core.hub.presence.signal(.foregrounded, deviceID: "tablet")
        core.loop.runUntilIdle()
        #expect(tablet.queued.count == 2)
        #expect(core.journal.cursor(userID: core.user, conversationID: core.conversation.id) == answer.seq)
        #expect(heard.reads.map(\.seq) == [answer.seq])
    }

    @Test func messagesShownOnAForegroundDeviceAreReadTogetherAfterTheInterval() {
        let core = CoreFixture()
        core.connect("phone")
        let (_, first) = turn(core, "one", device: "phone")
        let (_, second) = turn(core, "two", device: "phone")
        let heard = listening(core)

        core.hub.shown(deviceID: "phone", conversationID: core.conversation.id, seq: second.seq)
        core.hub.shown(deviceID: "phone", conversationID: core.conversation.id, seq: first.seq)
        core.loop.runUntilIdle()
        #expect(heard.reads.isEmpty, "gathered, not written per message")
        core.loop.advance(millis: 250)
        #expect(heard.reads.map(\.seq) == [second.seq], "one read, of the newest shown")
        #expect(core.journal.cursor(userID: core.user, conversationID: core.conversation.id) == second.seq)
    }

    @Test func aDeviceNotInTheForegroundReadsNothingByBeingSent() {
        let core = CoreFixture()
        core.connect("phone")
        let (_, tabletSocket) = core.connect("tablet")
        core.hub.presence.signal(.backgrounded, deviceID: "phone")
        let (_, answer) = turn(core, "one", device: "tablet")
        core.hub.detach(RecordingEndpoint(deviceID: "tablet"), socket: tabletSocket, userID: core.user)
        let heard = listening(core)

        core.hub.shown(deviceID: "phone", conversationID: core.conversation.id, seq: answer.seq)
        core.hub.shown(deviceID: "tablet", conversationID: core.conversation.id, seq: answer.seq)
        core.hub.shown(deviceID: "unknown", conversationID: core.conversation.id, seq: answer.seq)
        core.loop.advance(millis: 1_000)
        #expect(heard.reads.isEmpty, "background, offline and unknown devices do not show anything to the user")
    }

    @Test func observersHearAConversationCreatedOnceAndEveryChange() {
        let core = CoreFixture()
        let heard = listening(core)
        let created = core.resolve(ConversationKey("discoclaw", "c1"))
        #expect(heard.conversations.map(\.id) == [created.id])
        _ = core.resolve(ConversationKey("discoclaw", "c1"))
        _ = core.resolve(.main)
        #expect(heard.conversations.count == 1, "resolving an existing conversation is no change")
        var renamed = created
        renamed.title = "renamed"
        core.hub.conversations.updated(renamed)
        #expect(heard.conversations.map(\.title) == [nil, "renamed"])
    }
}

extension ChatEvent {
    static let empty = ChatEvent(
        id: "",
        seq: 0,
        userID: "",
        conversationID: "",
        role: .user,
        content: "",
        timestampMillis: 0,
        deviceID: nil,
        attachmentsJSON: nil
    )
}
