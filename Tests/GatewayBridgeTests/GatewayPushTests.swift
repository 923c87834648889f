import RelayCore
import Testing

@testable import GatewayBridge

@Suite struct GatewayPushTests {
    static func notice(tool: String, kind: PendingPush.Kind) -> PushNotice {
        let ask = ApprovalAsk(requestID: "r1", agent: "Claude Code", toolName: tool, summary: "touch x", input: .object([:]))
        let approval = Approval(
            id: String(repeating: "ab", count: 16),
            shortID: "abab",
            userID: "u1",
            conversationID: "cv_1",
            runID: "run-1",
            backend: "claude",
            ask: ask,
            createdAt: 1_000,
            expiresAt: 601_000
        )
        let push = Pushes.approvalPush(approval, deviceID: "phone", kind: kind, now: 2_000, dueAt: 2_000)
        return PushNotice(
            push: push,
            device: PushDevice(deviceID: "phone", userID: "u1", protocolName: "gateway", targets: []),
            conversation: nil,
            backendName: "claude"
        )
    }

    @Test func aBashApprovalIsOpenClawsExecApprovalAlert() throws {
        let content = GatewayPush.content(gatewayDeviceID: "gw-1")(Self.notice(tool: "Bash", kind: .approvalRequested), Pushes.Settings())
        #expect(content.title == "Exec approval required" && content.category == "openclaw.exec-approval" && content.wakesApp)
        let fields = try #require(content.custom["openclaw"])
        #expect(fields["kind"]?.stringValue == "exec.approval.requested" && fields["approvalId"]?.stringValue == String(repeating: "ab", count: 16))
        #expect(fields["gatewayDeviceId"]?.stringValue == "gw-1" && fields["ts"]?.intValue == 2_000)
    }

    @Test func otherToolsArePluginApprovalsAndResolvedOnesAreSilent() {
        let asked = GatewayPush.content(gatewayDeviceID: nil)(Self.notice(tool: "Write", kind: .approvalRequested), Pushes.Settings())
        #expect(asked.category == "openclaw.plugin-approval" && asked.title == "Claude Code wants to use Write" && asked.body == "touch x")
        let resolved = GatewayPush.content(gatewayDeviceID: nil)(Self.notice(tool: "Bash", kind: .approvalResolved), Pushes.Settings())
        #expect(resolved.silent && resolved.custom["openclaw"]?["kind"]?.stringValue == "exec.approval.resolved")
    }
}
