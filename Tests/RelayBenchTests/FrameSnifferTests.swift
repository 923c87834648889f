import Testing

@testable import RelayBench

@Suite struct FrameSnifferTests {
    @Test func findsMarkersAsBytes() {
        let ack = #"{"type":"ack","id":"c_1"}"#
        #expect(FrameSniffer.isAck(ack))
        #expect(!FrameSniffer.isAck(#"{"type":"message","content":"ack"}"#))
        #expect(!FrameSniffer.isAck(""))
        let final = #"{"type":"message","role":"assistant","streaming":false,"id":"s_9"}"#
        #expect(FrameSniffer.isAssistantFinal(final))
        #expect(!FrameSniffer.isAssistantFinal(#"{"type":"message","role":"assistant","streaming":true}"#))
        #expect(FrameSniffer.isUserEcho(#"{"type":"message","role":"user"}"#))
    }

    @Test func readsAStringValueAfterMultibyteText() {
        let text = #"{"content":"héllo 日本 🎉","id":"s_0192-ab","type":"message"}"#
        #expect(FrameSniffer.string("id", in: text) == "s_0192-ab")
        #expect(FrameSniffer.string("content", in: text) == "héllo 日本 🎉")
        #expect(FrameSniffer.string("missing", in: text) == nil)
        #expect(FrameSniffer.string("id", in: #"{"id":"unterminated"#) == nil)
        #expect(FrameSniffer.string("id", in: #"{"id":""}"#) == "")
    }

    @Test func readsTheNumberAfterAMarker() {
        #expect(FrameSniffer.number(after: "fan-", in: #"{"content":"fan-17 ünïcode"}"#) == 17)
        #expect(FrameSniffer.number(after: "fan-", in: #"{"content":"fan-x"}"#) == nil)
        #expect(FrameSniffer.number(after: "fan-", in: "no marker") == nil)
        #expect(FrameSniffer.number(after: "fan-", in: "fan-") == nil)
    }
}
