import Foundation
import RelayCore
import Testing

@Suite struct JSONParserTests {
    @Test func parsesEveryKind() {
        let value = JSONValue.parse(#" {"a":[1,-2,3.5,1e3,true,false,null],"b":{"c":"d"},"e":"","f":-0} "#)
        #expect(
            value
                == .object([
                    "a": .array([.int(1), .int(-2), .double(3.5), .double(1000), .bool(true), .bool(false), .null]),
                    "b": .object(["c": .string("d")]), "e": .string(""), "f": .int(0),
                ])
        )
    }

    @Test func decodesEscapesAndSurrogatePairs() {
        #expect(JSONValue.parse(#""a\"b\\c\/d\n\t\u00e9\ud83c\udf89""#) == .string("a\"b\\c/d\n\té🎉"))
        #expect(JSONValue.parse(#""\ud83c""#) == nil)
        #expect(JSONValue.parse(#""\udf89""#) == nil)
        #expect(JSONValue.parse(#""\x""#) == nil)
    }

    @Test(arguments: [
        "", "{", "}", "[1,]", "{\"a\":}", "{\"a\" 1}", "{a:1}", "01", "1.", ".5", "-", "1e", "tru", "nul", "\"abc", "[1] x",
        "\"tab\there\"", "{\"a\":1,}",
    ])
    func refusesMalformedInput(_ text: String) {
        #expect(JSONValue.parse(text) == nil)
    }

    @Test func refusesDeepNestingButAcceptsReasonableDepth() {
        #expect(JSONValue.parse(String(repeating: "[", count: 300) + String(repeating: "]", count: 300)) == nil)
        #expect(JSONValue.parse(String(repeating: "[", count: 100) + String(repeating: "]", count: 100)) != nil)
    }

    @Test func agreesWithFoundationOnRoundTrips() throws {
        let samples = [#"{"type":"message","id":"c_1","content":"hi ✓","attachments":[{"type":"image","data":"AAAA"}]}"#, "[[],{},\"\",0]"]
        for sample in samples {
            let ours = try #require(JSONValue.parse(sample))
            let theirs = try JSONDecoder().decode(JSONValue.self, from: Data(sample.utf8))
            #expect(ours == theirs)
        }
        #expect(JSONValue.parse("9223372036854775807") == .int(Int64.max))
        #expect(JSONValue.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
    }
}
