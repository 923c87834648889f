import GatewayWire
import RelayCore
import Testing

@testable import GatewayBridge

@Suite struct SessionListingTests {
    func conversation(title: String? = nil, keys: [ConversationKey] = [], directory: String? = nil) -> Conversation {
        Conversation(
            id: "cv_0123456789abcdef",
            userID: "u",
            title: title,
            workingDirectory: directory,
            createdAt: 1,
            updatedAt: 50,
            keys: keys
        )
    }

    @Test func aConversationWithoutASessionKeyIsNamedByItsIdAndTheKeyMapsBack() {
        let discoClaw = conversation(keys: [ConversationKey("discoclaw", "x")])
        #expect(SessionListing.key(of: discoClaw) == "cv:cv_0123456789abcdef")
        #expect(SessionListing.conversationID(inKey: SessionListing.key(of: discoClaw)) == discoClaw.id)
        let gateway = conversation(keys: [ConversationKey("discoclaw", "x"), .session("work")])
        #expect(SessionListing.key(of: gateway) == "work", "a session key the gateway knows stays the key")
        #expect(SessionListing.conversationID(inKey: "work") == nil && SessionListing.conversationID(inKey: "cv_0123") == nil)
    }

    @Test func theDisplayNameIsTheTitleElseSomethingReadable() {
        #expect(SessionListing.displayName(of: conversation(title: "Plans", keys: [.session("work")])) == "Plans")
        #expect(SessionListing.displayName(of: conversation(title: "  ", keys: [.session("work")])) == "work")
        #expect(SessionListing.displayName(of: conversation(directory: "/srv/projects/app")) == "app")
        #expect(SessionListing.displayName(of: conversation()) == "conversation 01234567")
    }

    @Test func aPreviewIsOneLineOfAtMost120Characters() {
        #expect(SessionListing.preview("first line\n\n  second line  \r\nthird") == "first line second line third")
        #expect(SessionListing.preview("") == "")
        let long = String(repeating: "é", count: 300)
        #expect(SessionListing.preview(long) == String(repeating: "é", count: 120), "characters, not bytes")
        #expect(SessionListing.preview(String(repeating: "\n", count: 5_000) + "late").isEmpty, "only the start of a huge text is looked at")
    }

    @Test func anEntryCarriesTheNewestMessageAndTheUnreadCount() throws {
        let last = ChatEvent(
            id: "s_9",
            seq: 9,
            userID: "u",
            conversationID: "cv_0123456789abcdef",
            role: .assistant,
            content: "an\nanswer",
            timestampMillis: 80,
            deviceID: nil,
            attachmentsJSON: nil
        )
        let summary = ConversationSummary(
            conversation: conversation(title: "Chat", keys: [ConversationKey("discoclaw", "x")]),
            lastEvent: last,
            lastReadSeq: 7,
            unreadCount: 1,
            messageCount: 4
        )
        let entry = SessionListing.entry(summary, backend: "echo", backendKind: "echo")
        #expect(entry.key == "cv:cv_0123456789abcdef" && entry.displayName == "Chat")
        #expect(entry.lastMessagePreview == "an answer" && entry.lastMessageRole == "assistant")
        #expect(entry.lastSeq == 9 && entry.lastReadSeq == 7 && entry.unreadCount == 1)
        #expect(entry.updatedAt == 80, "the newest message is newer than the conversation's own change")
        #expect(entry.backend == "echo" && entry.backendKind == "echo")

        let empty = ConversationSummary(conversation: conversation(), lastEvent: nil, lastReadSeq: 0, unreadCount: 0, messageCount: 0)
        let blank = try #require(JSONValue.parse(GatewayJSON.encode(SessionListing.entry(empty, backend: "echo", backendKind: nil))))
        #expect(blank["lastMessagePreview"] == .null && blank["lastSeq"]?.intValue == 0 && blank["updatedAt"]?.intValue == 50)
        #expect(blank["backendKind"] == .null && blank["lastMessageRole"] == .null, "written as null, not left out")
        // OpenClaw's row fields: the backend as `models.list` lists it, the label, the settings.
        #expect(entry.model == "echo" && entry.modelProvider == "echo" && entry.label == "Chat" && entry.unread == true)
        #expect(blank["unread"] == .bool(false) && blank["pinned"] == .bool(false) && blank["pinnedAt"] == .null && blank["fastMode"] == .null)
        #expect(blank["label"] == .null && blank["thinkingLevel"] == .null && blank["category"] == .null && blank["model"] == .string("echo"))

        var settings = ConversationSettings()
        (settings.fastMode, settings.thinkingLevel, settings.markedUnread, settings.pinned) = (.auto, "high", true, true)
        var set = conversation()
        set.settings = settings
        let marked = SessionListing.entry(
            ConversationSummary(conversation: set, lastEvent: nil, lastReadSeq: 0, unreadCount: 0, messageCount: 0),
            backend: "echo",
            backendKind: nil
        )
        #expect(marked.fastMode == .string("auto") && marked.thinkingLevel == "high" && marked.unread == true && marked.pinned == true)
    }
}
