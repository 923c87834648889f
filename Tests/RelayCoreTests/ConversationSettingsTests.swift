import RelayCore
import Testing

@Suite struct ConversationSettingsTests {
    @Test func thinkingLevelsTakeOpenClawsNamesAndSynonyms() {
        for level in ThinkingLevel.all { #expect(ThinkingLevel.canonical(level) == level) }
        let synonyms = [("X-High", "xhigh"), ("none", "off"), ("on", "low"), ("think", "minimal"), ("think harder", "medium"), ("auto", "adaptive")]
        for (word, level) in synonyms { #expect(ThinkingLevel.canonical(word) == level, "\(word)") }
        #expect(ThinkingLevel.canonical("loud") == nil && ThinkingLevel.canonical("") == nil)
        #expect(ConversationSettings.verboseLevel(" FULL ") == "full" && ConversationSettings.verboseLevel("chatty") == nil)
    }

    @Test func anEditStampsArchivingPinningAndTheChangeTime() {
        var conversation = Conversation(id: "c", userID: "u", createdAt: 1, updatedAt: 1)
        ConversationEdit.all([.configure(.pinned(true)), .archive(true), .configure(.category("Work"))]).apply(to: &conversation, at: 5)
        #expect(conversation.settings.pinnedAt == 5 && conversation.archivedAt == 5 && conversation.updatedAt == 5)
        ConversationEdit.configure(.pinned(true)).apply(to: &conversation, at: 9)
        #expect(conversation.settings.pinnedAt == 5, "pinned again: it was pinned at 5")
        ConversationEdit.all([.configure(.pinned(false)), .archive(false)]).apply(to: &conversation, at: 12)
        #expect(conversation.settings.pinnedAt == nil && conversation.archivedAt == nil && conversation.settings.category == "Work")
        #expect(!conversation.settings.isDefault && conversation.updatedAt == 12)
    }
}
