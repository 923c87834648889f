import GatewayWire
import RelayCore
import RelayTesting
import Testing

@testable import GatewayBridge

/// Tool approvals as OpenClaw operators see them: a Bash command is `exec.approval.requested`,
/// another tool `plugin.approval.requested`, only for `operator.approvals` (or admin); resolve,
/// list and get as OpenClaw answers them; every resolution (any device, expiry, abort) is announced.
@Suite struct GatewayApprovalsTests {
    /// A gateway whose backend waits, a writer (admin) that started run `r1` in session `main`, and the run.
    struct Fixture {
        let bed: GatewayTestbed
        let backend: ScriptedBackend
        let writer: GatewayTestClient
        let run: ScriptedBackend.Run

        init() throws {
            backend = ScriptedBackend(name: "claude")
            bed = GatewayTestbed(backends: [backend])
            (writer, _) = try bed.paired(TestDevice())
            _ = writer.request(
                "chat.send",
                .object(["sessionKey": .string("main"), "message": .string("make x"), "idempotencyKey": .string("r1")])
            )
            run = try #require(backend.runs.first)
        }

        /// The backend asks; returns the core's approval.
        @discardableResult
        func ask(
            _ tool: String = "Bash",
            _ summary: String = "touch x",
            request: String = "req-1",
            decisions: [ApprovalDecision] = ApprovalDecision.allCases,
            timeoutMillis: Int = 600_000
        ) throws -> Approval {
            let input: JSONValue = tool == "Bash" ? .object(["command": .string(summary)]) : .object(["file_path": .string(summary)])
            run.emit(
                .approval(
                    ApprovalAsk(
                        requestID: request,
                        agent: "Claude Code",
                        toolName: tool,
                        summary: summary,
                        input: input,
                        toolUseID: "toolu_\(request)",
                        directory: "/work/project",
                        decisions: decisions,
                        timeoutMillis: timeoutMillis
                    )
                )
            )
            bed.bed.settle()
            return try #require(bed.bed.hub.approvals.pending(userID: bed.settings.userID).first { $0.requestID == request })
        }

        /// Sends a request whose answer may come later (the core looks up the deciding device's name).
        func call(_ client: GatewayTestClient, _ method: String, _ params: JSONValue) -> () -> JSONValue? {
            let id = client.upcomingID
            let early = client.request(method, params)
            return { early ?? client.response(id) }
        }

        func resolve(_ client: GatewayTestClient, _ method: String = "exec.approval.resolve", id: String, _ decision: String) -> JSONValue? {
            let answer = call(client, method, .object(["id": .string(id), "decision": .string(decision)]))
            bed.bed.settle()
            return answer()
        }
    }

    static func payloads(_ client: GatewayTestClient, _ event: String) -> [JSONValue] {
        client.events(event).compactMap(\.["payload"])
    }

    @Test func aBashCommandIsAnExecApprovalForReviewersOnly() throws {
        let fixture = try Fixture()
        let (approver, _) = try fixture.bed.paired(TestDevice(), .scopes(["operator.approvals"]))
        let (reader, _) = try fixture.bed.paired(TestDevice(), .scopes(["operator.read", "operator.write"]))
        let approval = try fixture.ask()
        for client in [fixture.writer, approver] {
            let requested = try #require(Self.payloads(client, "exec.approval.requested").first)
            #expect(requested["id"] == .string(approval.id) && approval.id.count == 32)
            #expect(requested["createdAtMs"] == .int(approval.createdAt) && requested["expiresAtMs"] == .int(approval.createdAt + 600_000))
            let request = try #require(requested["request"])
            #expect(request["command"] == .string("touch x") && request["cwd"] == .string("/work/project"))
            #expect(request["host"] == .string("gateway") && request["security"] == .string("allowlist") && request["ask"] == .string("on-miss"))
            #expect(request["allowedDecisions"] == .array([.string("allow-once"), .string("allow-always"), .string("deny")]))
            #expect(request["agentId"] == .string("main") && request["sessionKey"] == .string("main"))
            #expect(request["runId"] == .string("r1") && request["toolCallId"] == .string("toolu_req-1"))
            #expect(request["nodeId"] == .null && request["resolvedPath"] == .null && request["unavailableDecisions"] == nil)
        }
        #expect(reader.events("exec.approval.requested").isEmpty, "approval events need operator.approvals")
        #expect(fixture.writer.events("plugin.approval.requested").isEmpty)
    }

    @Test func aResolveAnswersTheBackendAndEveryReviewerHearsIt() throws {
        let fixture = try Fixture()
        let device = TestDevice()
        let (approver, _) = try fixture.bed.paired(device, .scopes(["operator.approvals"]))
        let approval = try fixture.ask()
        let answer = try #require(fixture.resolve(approver, id: approval.id, "allow-once"))
        #expect(answer["ok"] == .bool(true) && answer["payload"] == .object(["ok": .bool(true)]), "\(answer)")
        #expect(fixture.run.answers.map(\.answer) == [.allow(always: false)])
        for client in [fixture.writer, approver] {
            let resolved = Self.payloads(client, "exec.approval.resolved")
            #expect(resolved.count == 1)
            #expect(resolved.first?["id"] == .string(approval.id) && resolved.first?["decision"] == .string("allow-once"))
            #expect(resolved.first?["resolvedBy"] == .string(device.deviceID), "a device without a name is known by its id")
            #expect(resolved.first?["request"]?["command"] == .string("touch x") && resolved.first?["ts"]?.intValue != nil)
            #expect(resolved.first?["cancelled"] == nil && resolved.first?["outcome"] == nil)
        }
        #expect(fixture.bed.bed.hub.approvals.pending(userID: fixture.bed.settings.userID).isEmpty)
    }

    @Test func theFirstDecisionWinsAcrossTwoOperators() throws {
        let fixture = try Fixture()
        let (other, _) = try fixture.bed.paired(TestDevice(), .scopes(["operator.approvals"]))
        let approval = try fixture.ask()
        let params: (String) -> JSONValue = { .object(["id": .string(approval.id), "decision": .string($0)]) }
        let first = fixture.call(fixture.writer, "exec.approval.resolve", params("allow-always"))
        let second = fixture.call(other, "exec.approval.resolve", params("deny"))
        fixture.bed.bed.settle()
        #expect(first()?["payload"] == .object(["ok": .bool(true)]))
        let refused = try #require(second())
        #expect(refused["ok"] == .bool(false) && refused["error"]?["code"] == .string("INVALID_REQUEST"))
        #expect(refused["error"]?["message"] == .string("approval already resolved"))
        #expect(refused["error"]?["details"]?["reason"] == .string("APPROVAL_ALREADY_RESOLVED"))
        #expect(
            fixture.resolve(other, id: approval.id, "allow-always")?["payload"] == .object(["ok": .bool(true)]),
            "the winning decision again is a retry"
        )
        #expect(fixture.run.answers.map(\.answer) == [.allow(always: true)], "the backend is answered once")
        for client in [fixture.writer, other] {
            #expect(Self.payloads(client, "exec.approval.resolved").map(\.["decision"]) == [.string("allow-always")])
        }
    }

    @Test func refusalsAreOpenClaws() throws {
        let fixture = try Fixture()
        let approval = try fixture.ask(decisions: [.allowOnce, .deny])
        let request = try #require(Self.payloads(fixture.writer, "exec.approval.requested").first?["request"])
        #expect(request["allowedDecisions"] == .array([.string("allow-once"), .string("deny")]))
        #expect(request["unavailableDecisions"] == .array([.string("allow-always")]))
        let writer = fixture.writer
        let cases: [(String, JSONValue, String, String?)] = [
            (
                "exec.approval.resolve", .object(["id": .string("0123456789abcdef0123456789abcdef"), "decision": .string("deny")]),
                "unknown or expired approval id", "APPROVAL_NOT_FOUND"
            ),
            (
                "exec.approval.resolve", .object(["id": .string("abc"), "decision": .string("deny")]), "unknown or expired approval id",
                "APPROVAL_NOT_FOUND"
            ),
            (
                "exec.approval.resolve", .object(["id": .string(String(repeating: "a", count: 300)), "decision": .string("deny")]),
                "unknown or expired approval id", "APPROVAL_NOT_FOUND"
            ),
            (
                "plugin.approval.resolve", .object(["id": .string(approval.id), "decision": .string("deny")]),
                "unknown or expired approval id", "APPROVAL_NOT_FOUND"
            ),
            ("exec.approval.resolve", .object(["id": .string(approval.id)]), "id and decision are required", nil),
            ("exec.approval.resolve", .object(["decision": .string("deny")]), "id and decision are required", nil),
            ("exec.approval.resolve", .object(["id": .string(approval.id), "decision": .string("yes")]), "invalid decision", nil),
            (
                "exec.approval.resolve", .object(["id": .string(approval.id), "decision": .string("allow-always")]),
                "allow-always is unavailable for this command", "APPROVAL_ALLOW_ALWAYS_UNAVAILABLE"
            ),
            ("exec.approval.get", .object([:]), "id is required", nil),
            ("exec.approval.get", .object(["id": .string("ffffffff")]), "unknown or expired approval id", "APPROVAL_NOT_FOUND"),
        ]
        for (method, params, message, reason) in cases {
            let refused = try #require(writer.request(method, params), "\(method) \(params)")
            #expect(refused["ok"] == .bool(false) && refused["error"]?["code"] == .string("INVALID_REQUEST"), "\(params)")
            #expect(refused["error"]?["message"] == .string(message), "\(params): \(refused)")
            #expect(refused["error"]?["details"]?["reason"] == reason.map(JSONValue.string), "\(params)")
        }
        let (reader, _) = try fixture.bed.paired(TestDevice(), .scopes(["operator.read", "operator.write", "operator.pairing"]))
        for method in ["exec.approval.resolve", "exec.approval.list", "exec.approval.get", "plugin.approval.list", "plugin.approval.resolve"] {
            let refused = reader.request(method, .object(["id": .string(approval.id), "decision": .string("deny")]))
            #expect(refused?["error"]?["message"] == .string("missing scope: operator.approvals"), "\(method)")
            #expect(refused?["error"]?["code"] == .string("FORBIDDEN"), "\(method)")
            #expect(
                refused?["error"]?["details"]
                    == .object([
                        "code": .string("MISSING_SCOPE"), "missingScope": .string("operator.approvals"),
                        "requiredScopes": .array([.string("operator.approvals")]),
                    ])
            )
        }
        #expect(fixture.run.answers.isEmpty && fixture.bed.bed.hub.approvals.approval(id: approval.id) != nil, "nothing was decided")
    }

    @Test func listAndGetCatchUpAReconnectingClient() throws {
        let fixture = try Fixture()
        let command = try fixture.ask()
        let edit = try fixture.ask("Edit", "/work/project/README.md", request: "req-2")
        let writer = fixture.writer
        let execs = try #require(writer.request("exec.approval.list")?["payload"]?.arrayValue)
        #expect(execs.map(\.["id"]) == [.string(command.id)] && execs.first?["request"]?["command"] == .string("touch x"))
        #expect(execs.first == Self.payloads(writer, "exec.approval.requested").first, "a listed approval is its requested event")
        let plugins = try #require(writer.request("plugin.approval.list")?["payload"]?.arrayValue)
        #expect(plugins.map(\.["id"]) == [.string(edit.id)] && plugins.first?["request"]?["toolName"] == .string("Edit"))
        for id in [command.id, command.shortID] {
            let details = try #require(writer.request("exec.approval.get", .object(["id": .string(id)]))?["payload"])
            #expect(
                details
                    == .object([
                        "id": .string(command.id), "commandText": .string("touch x"), "host": .string("gateway"), "nodeId": .null,
                        "agentId": .string("main"), "expiresAtMs": .int(command.expiresAt),
                        "allowedDecisions": .array([.string("allow-once"), .string("allow-always"), .string("deny")]),
                    ])
            )
        }
        let pluginGet = writer.request("exec.approval.get", .object(["id": .string(edit.id)]))
        #expect(pluginGet?["error"]?["details"]?["reason"] == .string("APPROVAL_NOT_FOUND"), "exec.approval.get knows exec approvals only")
        _ = fixture.resolve(writer, id: command.id, "deny")
        #expect(writer.request("exec.approval.list")?["payload"] == .array([]))
        let gone = writer.request("exec.approval.get", .object(["id": .string(command.id)]))
        #expect(gone?["error"]?["message"] == .string("unknown or expired approval id"))
    }

    @Test func anotherToolIsAPluginApproval() throws {
        let fixture = try Fixture()
        let approval = try fixture.ask("Edit", "/work/project/README.md")
        let requested = try #require(Self.payloads(fixture.writer, "plugin.approval.requested").first)
        let request = try #require(requested["request"])
        #expect(requested["id"] == .string(approval.id) && requested["expiresAtMs"] == .int(approval.expiresAt))
        #expect(request["title"] == .string("Claude Code wants to use Edit") && request["description"] == .string("/work/project/README.md"))
        #expect(
            request["toolName"] == .string("Edit") && request["toolCallId"] == .string("toolu_req-1") && request["severity"] == .string("warning")
        )
        #expect(request["detail"] == .string(#"{"file_path":"/work/project/README.md"}"#) && request["pluginId"] == .null)
        #expect(request["sessionKey"] == .string("main") && request["agentId"] == .string("main"))
        #expect(fixture.writer.events("exec.approval.requested").isEmpty)
        let answer = fixture.resolve(fixture.writer, "plugin.approval.resolve", id: approval.id, "deny")
        #expect(answer?["payload"] == .object(["ok": .bool(true)]))
        guard case .deny(let message)? = fixture.run.answers.first?.answer else {
            Issue.record("the backend hears a denial")
            return
        }
        #expect(message.hasSuffix("from gateway"))
        #expect(Self.payloads(fixture.writer, "plugin.approval.resolved").map(\.["decision"]) == [.string("deny")])
    }

    @Test func expiryAnAbortAndOtherProtocolsResolveItForOperatorsToo() throws {
        let fixture = try Fixture()
        let writer = fixture.writer
        let expiring = try fixture.ask(timeoutMillis: 60_000)
        fixture.bed.bed.advance(millis: 60_000)
        let expired = try #require(Self.payloads(writer, "exec.approval.resolved").first)
        #expect(expired["id"] == .string(expiring.id) && expired["decision"] == .string("deny") && expired["resolvedBy"] == .null)
        #expect(expired["outcome"] == .object(["message": .string("denied: nobody answered in time"), "severity": .string("warning")]))
        #expect(fixture.resolve(writer, id: expiring.id, "deny")?["error"]?["details"]?["reason"] == .string("APPROVAL_NOT_FOUND"))

        let elsewhere = try fixture.ask(request: "req-2")
        fixture.bed.bed.hub.approvals.decide(elsewhere.id, userID: fixture.bed.settings.userID, decision: .allowOnce, deviceID: "phone") { _ in }
        fixture.bed.bed.settle()
        #expect(Self.payloads(writer, "exec.approval.resolved").map(\.["resolvedBy"]) == [.string("phone")])

        let viaCommand = try fixture.ask(request: "req-3")
        _ = writer.request(
            "chat.send",
            .object(["sessionKey": .string("main"), "message": .string("/always \(viaCommand.shortID)"), "idempotencyKey": .string("cmd")])
        )
        fixture.bed.bed.settle()
        #expect(Self.payloads(writer, "exec.approval.resolved").map(\.["decision"]) == [.string("allow-always")])
        #expect(writer.chat("final").contains { $0["runId"] == .string("cmd") }, "a relay command's answer is its run's final")

        let cancelled = try fixture.ask(request: "req-4")
        _ = writer.request("chat.abort", .object(["sessionKey": .string("main")]))
        fixture.bed.bed.settle()
        let resolved = try #require(Self.payloads(writer, "exec.approval.resolved").first)
        #expect(resolved["id"] == .string(cancelled.id) && resolved["cancelled"] == .bool(true) && resolved["resolvedBy"] == .null)
    }

    @Test func theRelaysNotesAreHistoryNeverAFinal() throws {
        let fixture = try Fixture()
        let (reader, _) = try fixture.bed.paired(TestDevice(), .scopes(["operator.read"]))
        let approval = try fixture.ask()
        _ = fixture.resolve(fixture.writer, id: approval.id, "deny")
        fixture.run.emit(.final("done"))
        fixture.bed.bed.settle()
        for client in [fixture.writer, reader] {
            let finals = client.chat("final")
            #expect(finals.map(\.["runId"]) == [.string("r1")], "the notes are no run's final")
            #expect(finals.first?["message"]?["content"]?.arrayValue?.first?["text"] == .string("done"))
        }
        let history = try #require(reader.request("chat.history", .object(["sessionKey": .string("main")]))?["payload"]?["messages"]?.arrayValue)
        let notes = history.filter { $0["note"] == .bool(true) }
        #expect(notes.count == 2 && notes.allSatisfy { $0["role"] == .string("assistant") })
        #expect(notes.first?["content"]?.arrayValue?.first?["text"]?.stringValue?.hasPrefix("Claude Code wants to run Bash: `touch x`.") == true)
        #expect(history.filter { $0["note"] == nil }.map(\.["role"]) == [.string("user"), .string("assistant")])
    }
}
