import RelayCore
import Testing

@testable import RelayStorePostgres

@Suite struct HintCodecTests {
    static let turn = TurnRef(runID: "r1", deviceID: "d1", clientID: "m1")
    static let approval = Approval(
        id: "0123456789abcdef0123456789abcdef",
        shortID: "0123",
        userID: "u1",
        conversationID: "c1",
        runID: "r1",
        backend: "claude",
        ask: ApprovalAsk(requestID: "q1", agent: "main", toolName: "Bash", summary: "ls /tmp", input: .object(["command": .string("ls")])),
        createdAt: 1_000,
        expiresAt: 61_000
    )

    /// Every live case crosses as it was; durable events do not go this way.
    @Test(arguments: [
        BusEvent.streaming(TurnProgress(turn: turn, eventID: "e1", conversationID: "c1", content: "par\"tial ✓", startedAt: 5, seq: 8)),
        .assistantTyping(conversationID: "c1", active: true),
        .assistantTyping(conversationID: "c1", active: false),
        .tool(
            ToolProgress(
                turn: turn,
                eventID: "e1",
                conversationID: "c1",
                phase: .ended,
                activity: ToolActivity(id: "t1", name: "Bash", label: "ls", inputJSON: #"{"command":"ls /"}"#, success: true, result: "a\nb")
            )
        ),
        .tool(ToolProgress(turn: turn, eventID: "e1", conversationID: "c1", phase: .started, activity: ToolActivity(id: "t2", name: "Read"))),
        .status(TurnStatus(turn: turn, eventID: "e1", conversationID: "c1", text: "retrying 2/10")),
        .approval(.requested(approval)),
        .approval(.resolved(approval, ApprovalResolution(decision: .deny, cause: .expired, by: .relay, at: 9))),
    ])
    func carriesLiveEvents(_ event: BusEvent) throws {
        let payload = try #require(HintCodec.encode(live: event, stream: "@admins", origin: "n1"))
        let decoded = try #require(HintCodec.decodeLive(payload))
        #expect(decoded.origin == "n1" && decoded.stream == "@admins")
        #expect(decoded.event == event)
    }

    @Test func leavesDurableEventsToTheLog() {
        let message = ChatEvent(
            id: "e",
            seq: 1,
            userID: "u1",
            conversationID: "c1",
            role: .user,
            content: "hi",
            timestampMillis: 0,
            deviceID: nil,
            attachmentsJSON: nil
        )
        #expect(HintCodec.encode(live: .message(message), stream: "u1", origin: "n1") == nil)
        let failure = TurnFailure(turn: Self.turn, conversationID: "c1", userID: "u1", cause: .failed, reason: "x", timestampMillis: 0)
        #expect(HintCodec.encode(live: .turnFailed(failure), stream: "u1", origin: "n1") == nil)
    }

    @Test func carriesRequestsAndRefusesGarbage() throws {
        for control in [
            ClusterControl.abort(conversationID: "c1", runID: "r1", reason: "stop"), .abort(conversationID: "c2", runID: nil, reason: ""),
            .readMoved(ReadCursor(userID: "u1", conversationID: "c1", seq: 42, updatedAt: 1_700_000_000_000)),
            .conversationDeleted(Conversation(id: "c3", userID: "u1", title: "Gone", backend: "echo", createdAt: 5, updatedAt: 9)),
            .turnsHandedOver(node: "node-2"), .pushTargetsChanged(deviceID: "phone-1"),
        ] {
            let decoded = try #require(HintCodec.decodeControl(HintCodec.encode(control: control, origin: "n2")))
            #expect(decoded.origin == "n2" && decoded.control == control)
        }
        #expect(HintCodec.decodeLive("not json") == nil)
        #expect(HintCodec.decodeLive(#"{"o":"n1","s":"u1","k":"p","c":"c1"}"#) == nil)
        #expect(HintCodec.decodeControl(#"{"o":"n1"}"#) == nil)
    }
}
