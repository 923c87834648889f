import Foundation
import GatewayWire
import RelayCore
import RelayKit
import RelayTesting
import Testing

@testable import GatewayBridge

/// `sessions.patch` beyond the label, in OpenClaw's shape (`SessionsPatchParamsSchema`; the answer
/// as OpenClawKit's `OpenClawChatModelPatchResult` decodes it: `entry` required, `resolved`
/// `{modelProvider, model, …}`).
@Suite struct GatewaySessionPatchTests {
    let claude = ScriptedBackend.echo(name: "claude")
    let echo = ScriptedBackend.echo()

    func testbed() -> GatewayTestbed {
        var settings = GatewaySettings()
        settings.backendKinds = ["echo": "echo", "claude": "claude-code"]
        return GatewayTestbed(settings: settings, backends: [echo, claude])
    }

    func patch(_ client: GatewayTestClient, _ fields: [String: JSONValue]) -> JSONValue? {
        client.request("sessions.patch", .object(["key": .string("main")].merging(fields) { _, new in new }))
    }

    @Test func aModelThePickerBuiltRebindsTheSessionAndResolvesBackToTheChoice() throws {
        let bed = testbed()
        let (writer, _) = try bed.paired(TestDevice())
        let picked = try #require(patch(writer, ["model": .string("claude-code/claude")])?["payload"])
        #expect(picked["ok"] == .bool(true) && picked["key"] == .string("main"))
        #expect(picked["resolved"]?["modelProvider"] == .string("claude-code") && picked["resolved"]?["model"] == .string("claude"))
        #expect(picked["entry"]?["backend"] == .string("claude") && picked["entry"]?["model"] == .string("claude"))
        _ = writer.request("chat.send", .object(["sessionKey": .string("main"), "message": .string("hi"), "idempotencyKey": .string("r1")]))
        bed.bed.settle()
        #expect(claude.runs.count == 1 && echo.runs.isEmpty, "the next turn goes to the backend picked")

        let bare = try #require(patch(writer, ["model": .string("echo")])?["payload"])
        #expect(bare["resolved"]?["model"] == .string("echo") && bare["resolved"]?["modelProvider"] == .string("echo"))
        let changed = try #require(writer.events("sessions.changed").last?["payload"])
        #expect(changed["reason"] == .string("patch") && changed["session"]?["model"] == .string("echo"))

        for model in ["gpt-5", "echo/claude", "claude-code/echo", ""] {
            let refused = patch(writer, ["model": .string(model)])
            #expect(refused?["error"]?["code"] == .string("INVALID_REQUEST"), "\(model)")
        }
        let unknown = patch(writer, ["model": .string("gpt-5")])?["error"]
        #expect(unknown?["message"] == .string("unknown model gpt-5; models.list has: claude-code/claude, echo/echo"))
        #expect(unknown?["details"]?["code"] == .string("UNKNOWN_MODEL"))
        let cleared = try #require(patch(writer, ["model": .null])?["payload"])
        #expect(cleared["resolved"]?["model"] == .string("echo"), "null: the gateway's default backend answers again")
    }

    @Test func settingsAreStoredShownAndClearedByNull() throws {
        let bed = testbed()
        let (writer, _) = try bed.paired(TestDevice())
        let fields: [String: JSONValue] = [
            "thinkingLevel": .string("Think Harder"), "fastMode": .string("auto"), "verboseLevel": .string("full"), "pinned": .bool(true),
            "archived": .bool(true), "category": .string("Work"), "agentId": .string("main"),
        ]
        let set = try #require(patch(writer, fields)?["payload"])
        let entry = try #require(set["entry"])
        #expect(entry["thinkingLevel"] == .string("medium") && entry["fastMode"] == .string("auto") && entry["verboseLevel"] == .string("full"))
        #expect(entry["pinned"] == .bool(true) && entry["pinnedAt"]?.intValue != nil && entry["archived"] == .bool(true))
        #expect(entry["category"] == .string("Work") && set["resolved"]?["thinkingLevel"] == .string("medium"))
        let listed = writer.request("sessions.list")?["payload"]?["sessions"]?.arrayValue?.first
        #expect(listed?["thinkingLevel"] == .string("medium") && listed?["category"] == .string("Work"), "every setting shows in the row")

        _ = writer.request("chat.send", .object(["sessionKey": .string("main"), "message": .string("hi"), "idempotencyKey": .string("r1")]))
        bed.bed.settle()
        #expect(echo.runs.last?.request.settings.thinkingLevel == "medium", "the backend gets the settings with the turn")

        let nulls: [String: JSONValue] = [
            "thinkingLevel": .null, "fastMode": .bool(false), "verboseLevel": .null, "pinned": .bool(false), "archived": .bool(false),
            "category": .null,
        ]
        let cleared = try #require(patch(writer, nulls)?["payload"]?["entry"])
        #expect(cleared["thinkingLevel"] == .null && cleared["fastMode"] == .bool(false) && cleared["verboseLevel"] == .null)
        #expect(
            cleared["pinned"] == .bool(false) && cleared["pinnedAt"] == .null && cleared["archived"] == .bool(false) && cleared["category"] == .null
        )
    }

    @Test func unreadFalseReadsTheSessionAndTrueMarksIt() throws {
        let bed = testbed()
        let (writer, _) = try bed.paired(TestDevice())
        let (watcher, _) = try bed.paired(TestDevice(), .scopes(["operator.read"]))
        _ = writer.request("chat.send", .object(["sessionKey": .string("main"), "message": .string("hi"), "idempotencyKey": .string("r1")]))
        bed.bed.settle()
        #expect(watcher.request("sessions.list")?["payload"]?["sessions"]?.arrayValue?.first?["unreadCount"] == .int(1))
        let read = try #require(patch(writer, ["unread": .bool(false)])?["payload"]?["entry"])
        #expect(read["unreadCount"] == .int(0) && read["unread"] == .bool(false))
        let marked = try #require(patch(writer, ["unread": .bool(true)])?["payload"]?["entry"])
        #expect(marked["unreadCount"] == .int(0) && marked["unread"] == .bool(true), "marked unread, with nothing new to read")
        #expect(patch(writer, ["unread": .bool(false)])?["payload"]?["entry"]?["unread"] == .bool(false))
    }

    @Test func badValuesAreRefusedNamingTheProperty() throws {
        let bed = testbed()
        let (writer, _) = try bed.paired(TestDevice())
        let refusals: [([String: JSONValue], String)] = [
            (["thinkingLevel": .string("loud")], "invalid thinkingLevel (use off|minimal|low|medium|high|adaptive|xhigh|max)"),
            (["verboseLevel": .string("chatty")], "invalid verboseLevel (use off|on|full)"),
            (["fastMode": .string("turbo")], "fastMode must be true, false, \"auto\" or null"),
            (["pinned": .null], "pinned must be a boolean"), (["unread": .string("no")], "unread must be a boolean"),
            (["category": .int(3)], "category must be a string or null"),
            (["category": .string(String(repeating: "c", count: 513))], "category is longer than 512 bytes"),
            (["model": .string(String(repeating: "m", count: 257))], "model is longer than 256 bytes"),
            (["traceLevel": .string("on")], "unsupported property 'traceLevel'"),
            (["key": .string(String(repeating: "k", count: 1025))], "key is longer than 1024 bytes"),
        ]
        for (fields, message) in refusals {
            let refused = patch(writer, fields)
            #expect(refused?["ok"] == .bool(false) && refused?["error"]?["message"] == .string(message), "\(fields)")
        }
        #expect(writer.request("sessions.list")?["payload"]?["sessions"] == .array([]), "a refused patch makes no session")
    }
}
