import CompanionWire
import RelayCore
import Testing

@testable import CompanionBridge

/// The HTTP app's answer push and post, as values.
@Suite struct CompanionAnswerPushTests {
    func answer(_ text: String, fetchable: Bool = true) -> CompanionAnswerPush.Answer {
        CompanionAnswerPush.Answer(
            text: text,
            messageID: "s_1",
            fetchable: fetchable,
            projectPath: "/p/app",
            sessionID: "sess",
            requestID: "req",
            timestampMillis: 0
        )
    }

    @Test func theAlertIsPlainTextOnOneLineAtMost150CharactersWithItsEllipsis() {
        #expect(
            CompanionAnswerPush.alertText("# Fix\n\nUse **this** and [docs](https://x.y):\n```swift\nlet x = 1\n```\n- done")
                == "Fix Use this and docs: [code block] done"
        )
        let long = CompanionAnswerPush.alertText(String(repeating: "word ", count: 60))
        #expect(long.count <= 150 && long.hasSuffix("…") && !long.hasSuffix(" …"))
        #expect(CompanionAnswerPush.alertText(String(repeating: "é", count: 400)).count == 150, "one long word is cut mid-word")
        #expect(CompanionAnswerPush.alertText("  ") == "New message")
    }

    @Test func anAnswerGoesInlineUntilThePayloadPasses4096BytesAndFailuresAlwaysDo() {
        let short = CompanionAnswerPush.content(answer("hello"))
        #expect(short.custom["message"] == .string("hello") && short.custom["requiresFetch"] == .bool(false))
        #expect(short.wakesApp && !short.collapses && short.subtitle == "/p/app" && short.category == "CLAUDE_MESSAGE")
        let wide = CompanionAnswerPush.content(answer(String(repeating: "é", count: 2_500)))
        #expect(wide.custom["message"] == .string("") && wide.custom["requiresFetch"] == .bool(true) && wide.custom["preview"] != nil)
        let failure = CompanionAnswerPush.content(answer(String(repeating: "x", count: 500), fetchable: false))
        #expect(failure.custom["requiresFetch"] == .bool(false))
    }

    @Test func aPostNeedsAMessageAndA64HexTokenAndReadsTheRest() {
        let token = String(repeating: "ab", count: 32)
        let fields = CompanionFields([
            "message": .string("  hi  "), "projectPath": .string("/p/app"), "deviceToken": .string(token.uppercased()), "mode": .string("planning"),
        ])
        guard case .success(let post) = HTTPChatPost.read(fields) else {
            Issue.record("refused")
            return
        }
        #expect(post.message == "hi" && post.deviceToken == token && post.planning && post.sessionID == nil)
        let workspace = CompanionFields(["message": .string("x"), "workspace": .bool(true), "deviceToken": .string(token)])
        #expect((try? HTTPChatPost.read(workspace).get())?.projectPath == "__workspace__")
        for (body, says) in [
            (["projectPath": JSONValue.string("/p")], "Message is required"),
            (["message": .string("x"), "projectPath": .string("/p")], "Device token is required"),
            (["message": .string("x"), "projectPath": .string("/p"), "deviceToken": .string("xyz")], "64 hexadecimal"),
            (["message": .string("x"), "deviceToken": .string(token)], "projectPath is required"),
        ] {
            guard case .failure(let refusal) = HTTPChatPost.read(CompanionFields(body)) else {
                Issue.record("accepted \(body)")
                continue
            }
            #expect(refusal.error.contains(says), "\(body)")
        }
    }
}
