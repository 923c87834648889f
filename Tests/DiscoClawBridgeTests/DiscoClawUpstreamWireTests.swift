import RelayCore
import Testing

@testable import DiscoClawBridge

@Suite struct DiscoClawUpstreamWireTests {
    typealias Wire = DiscoClawUpstreamWire

    func event(_ json: String) -> Wire.Event? { Wire.event(Array(json.utf8)) }

    @Test func answerEventsDecode() {
        #expect(
            event(#"{"type":"message.delta","messageId":"a1","conversationId":"c","delta":"He","seq":7}"#)
                == .delta(messageID: "a1", text: "He", seq: 7)
        )
        #expect(
            event(#"{"type":"message.complete","messageId":"a1","conversationId":"c","content":"Hello","seq":9}"#)
                == .complete(messageID: "a1", content: "Hello", seq: 9)
        )
        #expect(event(#"{"type":"message.error","messageId":"a1","conversationId":"c","error":"boom"}"#) == .error(messageID: "a1", reason: "boom"))
        #expect(
            event(#"{"type":"message.delta","messageId":"a1","delta":"x","seq":1.7e12}"#)
                == .delta(messageID: "a1", text: "x", seq: 1_700_000_000_000)
        )
    }

    @Test func everythingElseIsOtherOrNothing() {
        #expect(event(#"{"type":"conversation.updated","conversationId":"c"}"#) == .other)
        #expect(event(#"{"type":"tool.start","messageId":"a1","tool":"bash","label":"ls"}"#) == .other)
        #expect(event(#"{"type":"message.delta","messageId":"a1"}"#) == .other, "a delta without text")
        #expect(event(#"{"type":"message.complete","messageId":"","content":"x"}"#) == .other, "an empty id")
        #expect(event("not json") == nil)
        #expect(event("[1,2]") == nil)
    }

    @Test func restRepliesDecode() throws {
        let posted = try #require(JSONValue.parse(#"{"id":"u1","seq":41,"clientId":"C","status":"complete","assistantMessageId":"a1"}"#))
        #expect(Wire.posted(posted) == Wire.Posted(userSeq: 41, answerID: "a1"))
        #expect(Wire.posted(.object(["id": .string("u1")])) == nil)
        let sync = try #require(
            JSONValue.parse(
                #"{"conversations":[],"messages":[{"id":"a1","status":"complete","content":"hi","seq":44},{"id":"a2","status":"error","error":"cut","content":"","seq":45},{"bad":1}],"cursor":45}"#
            )
        )
        #expect(
            Wire.syncPage(sync)
                == Wire.SyncPage(
                    messages: [
                        Wire.Message(id: "a1", status: "complete", content: "hi", error: nil, seq: 44),
                        Wire.Message(id: "a2", status: "error", content: "", error: "cut", seq: 45),
                    ],
                    cursor: 45
                )
        )
        let registration = try #require(JSONValue.parse(#"{"userId":"u","deviceId":"d","token":"t0k"}"#))
        #expect(Wire.registration(registration) == Wire.Registration(userID: "u", deviceID: "d", token: "t0k"))
        #expect(Wire.errorText(JSONValue.parse(#"{"statusCode":404,"error":"Not Found","message":"gone"}"#)) == "gone")
        #expect(Wire.errorText(JSONValue.parse(#"{"error":"Invalid token"}"#)) == "Invalid token")
    }
}
