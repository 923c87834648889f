import RelayCore
import RelayTesting
import Testing

@Suite struct RelayCommandTests {
    @Test func parsesOnlyTheBackendCommand() {
        #expect(RelayCommand("/backend") == .backend(nil))
        #expect(RelayCommand("  /backend  other \n") == .backend("other"))
        #expect(RelayCommand("/backends") == nil)
        #expect(RelayCommand("please /backend other") == nil)
        #expect(RelayCommand("\u{00A0}\u{2003}/backend wide") == .backend("wide"), "Unicode white space before the command")
        #expect(RelayCommand("") == nil && RelayCommand(" \n ") == nil)
    }

    @Test func backendRebindsTheConversationWithoutABackendTurn() {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        #expect(core.submit(core.message("/backend other", device: "phone")).isAccepted)
        #expect(core.backend.runs.isEmpty && core.other.runs.isEmpty, "no backend sees a relay command")
        #expect(phone.messages.map(\.content) == ["/backend other", "This conversation is now answered by other (it was scripted)."])
        #expect(phone.typing == [true, false])
        #expect(core.journal.conversations[core.conversation.id]?.backend == "other")
        #expect(core.hub.conversations.cached(id: core.conversation.id)?.backend == "other")
        core.submit(core.message("hello", device: "phone"))
        #expect(core.other.runs.map(\.request.text) == ["hello"] && core.backend.runs.isEmpty)
    }

    @Test func unknownBackendsAndTheBareCommandAnswerWithTheChoices() {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        core.submit(core.message("/backend nope", device: "phone"))
        core.submit(core.message("/backend", device: "phone"))
        #expect(
            phone.messages.filter { $0.role == .assistant }.map(\.content) == [
                "There is no backend named nope. Backends: other, scripted.",
                "This conversation is answered by scripted. Backends: other, scripted. Switch with /backend NAME.",
            ]
        )
        #expect(core.journal.conversations[core.conversation.id]?.backend == nil)
    }

    @Test func aCommandWaitsForTheRunningTurn() {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        core.submit(core.message("first", device: "phone"))
        core.submit(core.message("/backend other", device: "phone"))
        #expect(phone.messages.filter { $0.role == .assistant }.isEmpty, "the command is queued behind the running turn")
        core.emit(.final("one"), run: 0)
        #expect(phone.messages.filter { $0.role == .assistant }.map(\.content).first == "one")
        #expect(core.journal.conversations[core.conversation.id]?.backend == "other")
    }
}
