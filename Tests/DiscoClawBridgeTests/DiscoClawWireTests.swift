import DiscoClawWire
import RelayCore
import Testing

/// The one model both roles share: what the downstream writes is what the upstream reads.
@Suite struct DiscoClawWireTests {
    func event(_ json: String) -> DiscoClawEvent? { DiscoClawEvent.decode(Array(json.utf8)) }

    func object(_ json: String) throws -> [String: JSONValue] { try #require(JSONValue.parse(json)?.objectValue) }

    @Test func answerEventsDecode() {
        #expect(
            event(#"{"type":"message.delta","messageId":"a1","conversationId":"c","delta":"He","seq":7}"#)
                == .delta("a1", "He", seq: 7, conversation: "c")
        )
        #expect(
            event(#"{"type":"message.complete","messageId":"a1","conversationId":"c","content":"Hello","seq":9}"#)
                == .complete("a1", "Hello", seq: 9, conversation: "c")
        )
        #expect(event(#"{"type":"message.error","messageId":"a1","conversationId":"c","error":"boom"}"#) == .error("a1", "boom", conversation: "c"))
        #expect(event(#"{"type":"message.error","messageId":"a1"}"#) == .error("a1", "the server reported an error without a reason"))
        #expect(event(#"{"type":"message.delta","messageId":"a1","delta":"x","seq":1.7e12}"#) == .delta("a1", "x", seq: 1_700_000_000_000))
        #expect(event(#"{"type":"message.delta","messageId":"a1","delta":"x","seq":"7"}"#) == .delta("a1", "x"), "a mistyped seq is no seq")
    }

    @Test func everythingElseIsOtherOrNothing() {
        #expect(event(#"{"type":"conversation.updated","conversationId":"c"}"#) == .conversationUpdated(.init(conversationId: "c")))
        #expect(
            event(#"{"type":"tool.start","messageId":"a1","tool":"bash","label":"ls"}"#)
                == .toolStart(.init(messageId: "a1", tool: "bash", label: "ls"))
        )
        #expect(event(#"{"type":"beads.updated"}"#) == .other(type: "beads.updated"))
        #expect(event(#"{"type":"message.delta","messageId":"a1"}"#) == .other(type: "message.delta"), "a delta without text")
        #expect(event(#"{"type":"message.complete","messageId":"","content":"x"}"#) == .other(type: "message.complete"), "an empty id")
        #expect(event(#"{"messageId":"a1"}"#) == .other(type: nil))
        #expect(event("not json") == nil)
        #expect(event("[1,2]") == nil)
    }

    @Test func eventsAreWrittenWithTheirTypeAndSortedKeys() {
        #expect(
            DiscoClawJSON.encode(DiscoClawEvent.delta("a1", "He/llo", seq: 7, conversation: "c"))
                == #"{"conversationId":"c","delta":"He/llo","messageId":"a1","seq":7,"type":"message.delta"}"#
        )
        #expect(
            DiscoClawJSON.encode(DiscoClawEvent.error("a1", "boom", conversation: "c"))
                == #"{"conversationId":"c","error":"boom","messageId":"a1","type":"message.error"}"#
        )
        #expect(
            DiscoClawJSON.encode(DiscoClawEvent.toolEnd(.init(messageId: "a1", tool: "bash")))
                == #"{"messageId":"a1","tool":"bash","type":"tool.end"}"#
        )
        #expect(
            DiscoClawJSON.encode(DiscoClawEvent.conversationUpdated(.init(conversationId: "c")))
                == #"{"conversationId":"c","type":"conversation.updated"}"#
        )
    }

    @Test func whatTheDownstreamWritesTheUpstreamReadsBack() throws {
        let events: [DiscoClawEvent] = [
            .delta("a1", "Hé", seq: 3, conversation: "c"), .complete("a1", "Hé!", seq: 4, conversation: "c"), .error("a2", "cut", conversation: "c"),
            .toolStart(.init(messageId: "a1", tool: "bash", label: "ls -l")), .conversationUpdated(.init(conversationId: "c")),
        ]
        for event in events { #expect(DiscoClawEvent.decode(DiscoClawJSON.bytes(event)) == event) }
        let posted = DiscoClawPosted(id: "u1", seq: 41, clientId: "C", assistantMessageId: "a1")
        #expect(DiscoClawJSON.decode(DiscoClawPosted.self, from: DiscoClawJSON.bytes(posted)) == posted)
        let registration = DiscoClawRegistration(userId: "u", deviceId: "d", token: "t0k")
        #expect(DiscoClawJSON.decode(DiscoClawRegistration.self, from: DiscoClawJSON.bytes(registration)) == registration)
        let conversation = DiscoClawConversation(id: "c", title: "t", createdAt: 1, updatedAt: 2, archivedAt: 2, backend: "echo")
        let message = DiscoClawMessage(
            id: "m",
            clientId: "C",
            conversationId: "c",
            role: "user",
            content: "hi",
            status: "complete",
            seq: 5,
            createdAt: 1
        )
        let page = DiscoClawSyncPage(conversations: [conversation], messages: [message], cursor: 5)
        #expect(DiscoClawJSON.decode(DiscoClawSyncPage.self, from: DiscoClawJSON.bytes(page)) == page)
    }

    @Test func restRepliesAsAServerWritesThemDecode() {
        func decode<T: Decodable>(_ type: T.Type, _ json: String) -> T? { DiscoClawJSON.decode(type, from: Array(json.utf8)) }
        #expect(
            decode(DiscoClawPosted.self, #"{"id":"u1","seq":41,"clientId":"C","status":"complete","assistantMessageId":"a1"}"#)?.assistantMessageId
                == "a1"
        )
        #expect(decode(DiscoClawPosted.self, #"{"id":"u1"}"#) == nil)
        #expect(decode(DiscoClawPosted.self, #"{"id":"u1","assistantMessageId":""}"#) == nil)
        let sync = decode(
            DiscoClawSyncPage.self,
            #"{"conversations":[{"bad":1}],"messages":[{"id":"a1","status":"complete","content":"hi","seq":44},{"id":"a2","status":"error","error":"cut","seq":45},{"bad":1}],"cursor":45}"#
        )
        #expect(
            sync
                == DiscoClawSyncPage(
                    conversations: [],
                    messages: [.row("a1", "complete", content: "hi", seq: 44), .row("a2", "error", error: "cut", seq: 45)],
                    cursor: 45
                )
        )
        #expect(decode(DiscoClawSyncPage.self, #"{"cursor":3}"#) == nil, "no messages: not a sync page")
        #expect(
            decode(DiscoClawRegistration.self, #"{"userId":"u","deviceId":"d","token":"t0k"}"#)
                == DiscoClawRegistration(userId: "u", deviceId: "d", token: "t0k")
        )
        #expect(decode(DiscoClawRegistration.self, #"{"deviceId":"d","token":""}"#) == nil)
        #expect(decode(DiscoClawConversation.self, #"{"id":"cv1","createdAt":"soon"}"#)?.id == "cv1")
        #expect(decode(DiscoClawErrorBody.self, #"{"statusCode":404,"error":"Not Found","message":"gone"}"#)?.reason == "gone")
        #expect(decode(DiscoClawErrorBody.self, #"{"error":"Invalid token"}"#)?.reason == "Invalid token")
    }

    @Test func membersThatMayBeNullAreWrittenAsNull() {
        #expect(
            DiscoClawJSON.encode(DiscoClawPosted(id: "u1", seq: 2, clientId: nil, assistantMessageId: nil))
                == #"{"assistantMessageId":null,"clientId":null,"id":"u1","seq":2,"status":"complete"}"#
        )
        var conversation = DiscoClawConversation(id: "c", title: nil, createdAt: 1, updatedAt: 2)
        #expect(DiscoClawJSON.encode(conversation) == #"{"createdAt":1,"id":"c","isProtected":false,"title":null,"updatedAt":2}"#)
        conversation.claudeSessionId = .some(nil)
        #expect(
            DiscoClawJSON.encode(conversation) == #"{"claudeSessionId":null,"createdAt":1,"id":"c","isProtected":false,"title":null,"updatedAt":2}"#
        )
    }

    @Test func requestsAreWrittenAsTheAppWritesThem() {
        #expect(
            DiscoClawJSON.encode(DiscoClawDeviceRequest(name: "clawrelay", platform: "macos", setupToken: "s"))
                == #"{"name":"clawrelay","platform":"macos","setupToken":"s"}"#
        )
        #expect(DiscoClawJSON.encode(DiscoClawConversationRequest(title: nil)) == "{}")
        #expect(DiscoClawJSON.encode(DiscoClawMessageRequest(content: "hi", clientId: "C")) == #"{"clientId":"C","content":"hi"}"#)
    }

    @Test func aPostedMessageIsCheckedByTheProtocolsRules() throws {
        #expect(
            try DiscoClawMessageRequest(json: object(#"{"content":" hi ","clientId":null}"#))
                == DiscoClawMessageRequest(content: " hi ", clientId: nil)
        )
        for (body, error) in [
            (#"{}"#, DiscoClawError.contentRequired), (#"{"content":" \n\t"}"#, .contentRequired), (#"{"content":5}"#, .contentRequired),
            (#"{"content":"x","clientId":5}"#, .clientIDNotString), (#"{"content":"x","clientId":""}"#, .clientIDLength(maxBytes: 128)),
            (#"{"content":"x","clientId":"\#(String(repeating: "a", count: 129))"}"#, .clientIDLength(maxBytes: 128)),
        ] {
            #expect(throws: error, "\(body)") { try DiscoClawMessageRequest(json: object(body)) }
        }
    }

    @Test func aPatchTellsAnAbsentTitleFromAClearedOne() throws {
        #expect(try DiscoClawConversationPatch(json: object(#"{"archived":true}"#)) == DiscoClawConversationPatch(archived: true))
        #expect(try DiscoClawConversationPatch(json: object(#"{"title":null}"#)) == DiscoClawConversationPatch(title: .some(nil)))
        #expect(try DiscoClawConversationPatch(json: object(#"{"title":"x","backend":7}"#)) == DiscoClawConversationPatch(title: "x"))
        #expect(throws: DiscoClawError.titleNotString) { try DiscoClawConversationPatch(json: object(#"{"title":1}"#)) }
        #expect(throws: DiscoClawError.archivedNotBoolean) { try DiscoClawConversationPatch(json: object(#"{"archived":null}"#)) }
        #expect(
            DiscoClawDeviceRequest(json: try object(#"{"name":3,"platform":"ios","setupToken":["x"]}"#))
                == DiscoClawDeviceRequest(name: nil, platform: "ios")
        )
    }

    @Test func theErrorTableGivesEachErrorItsStatusShapeAndClose() {
        #expect(DiscoClawJSON.encode(DiscoClawError.invalidToken.body) == #"{"error":"Invalid token"}"#)
        #expect(DiscoClawError.invalidToken.status == 401 && DiscoClawError.invalidToken.closeCode == 1008)
        #expect(DiscoClawJSON.encode(DiscoClawError.notFound.body) == #"{"error":"Not Found","message":"Not Found","statusCode":404}"#)
        #expect(
            DiscoClawJSON.encode(DiscoClawError.contentRequired.body) == #"{"error":"Bad Request","message":"content is required","statusCode":400}"#
        )
        #expect(DiscoClawError.tooManyDevices(limit: 2).body == DiscoClawErrorBody(error: "This user already has 2 devices; remove one first"))
        #expect(DiscoClawError.tooManyDevices(limit: 2).status == 409 && DiscoClawError.queueFull.status == 429)
        #expect(DiscoClawError.unknownBackend("x", configured: ["a", "b"]).message == "no backend named x; configured: a, b")
        #expect(DiscoClawError.payloadTooLarge(maxBytes: 9).body.error == "Payload Too Large")
        #expect(DiscoClawError.deviceRevoked.closeCode == 1008 && DiscoClawError.deviceRevoked.message == "Device revoked")
        #expect(DiscoClawError.notFound.closeCode == nil)
    }
}
