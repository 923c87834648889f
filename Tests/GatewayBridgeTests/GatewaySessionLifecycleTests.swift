import Foundation
import GatewayWire
import RelayCore
import RelayKit
import RelayTesting
import Testing

@testable import GatewayBridge

/// `sessions.reset`, `sessions.create`, `sessions.delete` and `sessions.compact` in OpenClaw's
/// shapes (`SessionsResetParamsSchema` → `{ok, key, entry}`, create → `{ok, key, sessionId,
/// entry}`, delete → `{ok, key, deleted, archived}`, compact → `{ok, key, compacted}`), each
/// announced by `sessions.changed` with OpenClaw's reason.
@Suite struct GatewaySessionLifecycleTests {
    func send(_ client: GatewayTestClient, _ text: String, key: String = "main", run: String) {
        _ = client.request("chat.send", .object(["sessionKey": .string(key), "message": .string(text), "idempotencyKey": .string(run)]))
    }

    func reasons(_ client: GatewayTestClient, key: String) -> [String] {
        client.events("sessions.changed").compactMap { $0["payload"] }.filter { $0["sessionKey"] == .string(key) }.compactMap {
            $0["reason"]?.stringValue
        }
    }

    @Test func resetGivesTheKeyAFreshSessionAndArchivesTheOld() throws {
        let bed = GatewayTestbed()
        let (writer, _) = try bed.paired(TestDevice())
        send(writer, "hello", run: "r1")
        let before = try #require(writer.request("sessions.list")?["payload"]?["sessions"]?.arrayValue?.first?["sessionId"])
        _ = writer.events("sessions.changed")
        let reset = try #require(writer.request("sessions.reset", .object(["key": .string("main"), "reason": .string("new")]))?["payload"])
        #expect(reset["ok"] == .bool(true) && reset["key"] == .string("main") && reset["entry"]?["key"] == .string("main"))
        #expect(reset["entry"]?["sessionId"] != before && reset["entry"]?["messageCount"] == .int(0))
        #expect(writer.request("chat.history", .object(["sessionKey": .string("main")]))?["payload"]?["messages"] == .array([]))
        #expect(reasons(writer, key: "main") == ["new"])
        let archived = "cv:" + (before.stringValue ?? "")
        #expect(writer.request("chat.history", .object(["sessionKey": .string(archived)]))?["payload"]?["messages"]?.arrayValue?.count == 2)
        let byID = try #require(writer.request("sessions.reset", .object(["key": .string(archived)]))?["payload"])
        #expect(byID["key"]?.stringValue?.hasPrefix("cv:") == true && byID["key"]?.stringValue != archived, "a cv: key's answer names the fresh one")
        for bad: JSONValue in [
            .object([:]), .object(["key": .string("main"), "reason": .string("later")]), .object(["key": .string("main"), "x": .int(1)]),
        ] {
            #expect(writer.request("sessions.reset", bad)?["error"]?["code"] == .string("INVALID_REQUEST"), "\(bad)")
        }
    }

    @Test func openClawsGuardsRefuseAStaleSessionAndALiveOneUnderArchivedOnly() throws {
        let bed = GatewayTestbed()
        let (writer, _) = try bed.paired(TestDevice())
        send(writer, "hello", key: "work", run: "r1")
        let id = try #require(writer.request("sessions.list")?["payload"]?["sessions"]?.arrayValue?.first?["sessionId"])
        let stale = writer.request("sessions.reset", .object(["key": .string("work"), "expectedSessionId": .string("cv_old")]))?["error"]
        #expect(stale?["message"] == .string("Session work changed; retry.") && stale?["details"]?["reason"] == .string("session-changed"))
        let fresh = try #require(writer.request("sessions.reset", .object(["key": .string("work"), "expectedSessionId": id]))?["payload"])
        #expect(fresh["ok"] == .bool(true) && fresh["entry"]?["sessionId"] != id)
        let live = writer.request(
            "sessions.delete",
            .object(["key": .string("work"), "archivedOnly": .bool(true), "emitLifecycleHooks": .bool(false)])
        )
        #expect(live?["error"]?["message"] == .string("Session work is not archived."))
        let gone = writer.request("sessions.delete", .object(["key": .string("work"), "expectedSessionId": fresh["entry"]?["sessionId"] ?? .null]))
        #expect(gone?["payload"]?["deleted"] == .bool(true))
    }

    @Test func slashNewInChatSendIsRunByTheRelay() throws {
        let echo = ScriptedBackend.echo()
        let bed = GatewayTestbed(backends: [echo])
        let (writer, _) = try bed.paired(TestDevice())
        send(writer, "hello", run: "r1")
        send(writer, "/new", run: "r2")
        bed.bed.settle()
        #expect(echo.runs.map(\.request.text) == ["hello"], "the backend never sees /new")
        #expect(writer.request("chat.history", .object(["sessionKey": .string("main")]))?["payload"]?["messages"] == .array([]))
        #expect(reasons(writer, key: "main").contains("new"))
    }

    @Test func createMakesASessionWithSettingsAndDeleteTakesItAway() throws {
        let bed = GatewayTestbed()
        let (writer, _) = try bed.paired(TestDevice())
        let made = try #require(
            writer.request("sessions.create", .object(["key": .string("plans"), "label": .string("Plans"), "thinkingLevel": .string("low")]))?[
                "payload"
            ]
        )
        #expect(made["ok"] == .bool(true) && made["key"] == .string("plans") && made["sessionId"] == made["entry"]?["sessionId"])
        #expect(made["entry"]?["label"] == .string("Plans") && made["entry"]?["thinkingLevel"] == .string("low"))
        #expect(reasons(writer, key: "plans").first == "create")
        let generated = try #require(writer.request("sessions.create")?["payload"]?["key"]?.stringValue)
        #expect(generated.hasPrefix("chat-"))
        #expect(writer.request("sessions.create", .object(["fork": .bool(true)]))?["error"]?["message"] == .string("unsupported property 'fork'"))
        let child = writer.request(
            "sessions.create",
            .object(["key": .string("child"), "parentSessionKey": .string("plans"), "agentId": .string("main")])
        )
        #expect(child?["payload"]?["key"] == .string("child"), "OpenClawKit's child session: the parent is taken, not kept")

        send(writer, "keep me", key: "plans", run: "r1")
        let kept = try #require(writer.request("sessions.delete", .object(["key": .string("plans"), "deleteTranscript": .bool(false)]))?["payload"])
        #expect(kept["ok"] == .bool(true) && kept["deleted"] == .bool(true))
        let archivedKey = try #require(kept["archived"]?.arrayValue?.first?.stringValue)
        #expect(writer.request("chat.history", .object(["sessionKey": .string(archivedKey)]))?["payload"]?["messages"]?.arrayValue?.count == 2)
        #expect(reasons(writer, key: "plans").last == "delete")

        let gone = try #require(writer.request("sessions.delete", .object(["key": .string(generated)]))?["payload"])
        #expect(gone["deleted"] == .bool(true) && gone["archived"] == .array([]))
        #expect(reasons(writer, key: generated).last == "delete")
        let listed = writer.request("sessions.list")?["payload"]?["sessions"]?.arrayValue?.compactMap { $0["key"]?.stringValue } ?? []
        #expect(!listed.contains(generated) && !listed.contains("plans"))
        #expect(writer.request("sessions.delete", .object(["key": .string("never")]))?["payload"]?["deleted"] == .bool(false))
        #expect(
            writer.request("sessions.delete", .object(["key": .string("main")]))?["error"]?["message"]
                == .string("Cannot delete the main session (main).")
        )
    }

    @Test func compactIsTheBackendsOwnOrNothingToCompact() throws {
        let echo = ScriptedBackend.echo()
        let bed = GatewayTestbed(backends: [echo])
        let (writer, _) = try bed.paired(TestDevice())
        send(writer, "hello", run: "r1")
        let none = try #require(writer.request("sessions.compact", .object(["key": .string("main")]))?["payload"])
        #expect(
            none
                == .object([
                    "ok": .bool(true), "key": .string("main"), "compacted": .bool(false),
                    "reason": .string("its backend keeps no context to compact"),
                ])
        )
        echo.canCompact = true
        let done = try #require(writer.request("sessions.compact", .object(["key": .string("main"), "maxLines": .int(10)]))?["payload"])
        #expect(done["compacted"] == .bool(true) && echo.runs.last?.request.text == "/compact")
        let compacts = writer.events("sessions.changed").compactMap { $0["payload"] }.filter { $0["reason"] == .string("compact") }
        #expect(compacts.map { $0["compacted"] } == [.bool(false), .bool(true)])
        #expect(writer.request("sessions.compact", .object(["key": .string("never")]))?["error"]?["message"] == .string("unknown session"))
    }
}
