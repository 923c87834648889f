import GatewayWire
import RelayCore

/// OpenClaw's `agent` events for operators that read chat: a run's `lifecycle` (start when its
/// turn starts, end or error when it ends), its `assistant` text (with each `chat` delta, so the
/// same throttle holds both) and its `tool` uses (only to sockets whose `connect.caps` holds
/// `"tool-events"`). `runId` is the run id (a `chat.send`'s idempotency key), whatever protocol
/// started the run. A run's status lines (`TurnStatus`, "API overloaded, retrying 2/10") have no
/// place in OpenClaw's streams and are not sent.
///
/// The frames of one core event are sent to every reader at once, when the first reader is handed
/// the event, before its `chat` event: each socket sees a run's `agent` frames in order, the
/// lifecycle `end` before the `chat` final.
extension GatewayDownstream {
    func emitAgentFrames(for event: BusEvent) {
        switch event {
        case .assistantTyping(let conversationID, active: true):
            // The turn that started is the conversation's active one (the core starts it, then says so).
            guard let progress = hub.turns.activeProgress(in: conversationID) else { return }
            agentRun(progress.turn.runID, conversationID: conversationID, startedAt: progress.startedAt)
        case .streaming(let progress):
            agentRun(progress.turn.runID, conversationID: progress.conversationID, startedAt: progress.startedAt)
        case .tool(let tool):
            let run = agentRun(tool.turn.runID, conversationID: tool.conversationID, startedAt: clock.nowMillis())
            emitAgent(run, runID: tool.turn.runID, stream: "tool", data: Self.toolData(tool))
        case .message(let message) where message.role == .assistant:
            // A note has no turn: it ends no run. A run not seen starting (a relay command's
            // answer, an answer replayed after a reconnect) has no lifecycle to end.
            guard let runID = message.turn?.runID, let run = chatRuns.agents.removeValue(forKey: runID) else { return }
            emitAssistantText(message.content, of: run, runID: runID)
            emitAgent(
                run,
                runID: runID,
                stream: "lifecycle",
                data: AgentLifecycleData(phase: "end", startedAt: run.startedAt, endedAt: clock.nowMillis())
            )
        case .turnFailed(let failure):
            guard let run = chatRuns.agents.removeValue(forKey: failure.turn.runID) else { return }
            var data = AgentLifecycleData(phase: "end", startedAt: run.startedAt, endedAt: clock.nowMillis())
            if failure.cause == .aborted {
                data.aborted = true
                data.stopReason = "aborted"
            } else {
                data.phase = "error"
                data.error = failure.shown
            }
            emitAgent(run, runID: failure.turn.runID, stream: "lifecycle", data: data)
        case .message, .assistantTyping, .status, .approval:
            return
        }
    }

    /// The run's view; on first sight its lifecycle `start` goes out.
    @discardableResult
    func agentRun(_ runID: String, conversationID: String, startedAt: Int64) -> AgentRunView {
        if let run = chatRuns.agents[runID] { return run }
        let run = AgentRunView(startedAt: startedAt, sessionKey: sessionKey(of: conversationID))
        chatRuns.agents[runID] = run
        emitAgent(run, runID: runID, stream: "lifecycle", data: AgentLifecycleData(phase: "start", startedAt: startedAt))
        return run
    }

    /// The answer so far on the `assistant` stream, when it changed since the stream last showed it.
    func emitAssistantText(_ text: String, of run: AgentRunView, runID: String) {
        guard text != run.text else { return }
        let delta = text.hasPrefix(run.text) ? String(text.dropFirst(run.text.count)) : text
        run.text = text
        emitAgent(run, runID: runID, stream: "assistant", data: AgentAssistantData(text: text, delta: delta))
    }

    /// One frame to every reader: numbered once for the sockets that take the tool stream, and
    /// once more (tool frames aside) for those that do not. `data` is encoded once.
    private func emitAgent(_ run: AgentRunView, runID: String, stream: String, data: some Encodable) {
        let dataJSON = GatewayJSON.encode(data)
        let ts = clock.nowMillis()
        run.seqWithTools += 1
        let withTools = AgentEventEnvelope(runId: runID, seq: run.seqWithTools, sessionKey: run.sessionKey, stream: stream, ts: ts)
        broadcast("agent", payloadJSON: withTools.payloadJSON(dataJSON: dataJSON)) { $0.readsChat && $0.wantsToolEvents }
        guard stream != "tool" else { return }
        run.seqWithoutTools += 1
        let without = AgentEventEnvelope(runId: runID, seq: run.seqWithoutTools, sessionKey: run.sessionKey, stream: stream, ts: ts)
        broadcast("agent", payloadJSON: without.payloadJSON(dataJSON: dataJSON)) { $0.readsChat && !$0.wantsToolEvents }
    }

    /// A tool's start (its input as `args`) or its end (`isError`, and its result text when the backend gave one).
    static func toolData(_ tool: ToolProgress) -> AgentToolData {
        let activity = tool.activity
        var data = AgentToolData(phase: tool.phase == .started ? "start" : "result", name: activity.name, toolCallId: activity.id)
        data.meta = activity.label
        switch tool.phase {
        case .started:
            data.args = JSONValue.parse(activity.inputJSON) ?? .object([:])
        case .ended:
            data.isError = activity.success == false
            data.result = activity.result.map(AgentToolData.Result.init(text:))
        }
        return data
    }
}
