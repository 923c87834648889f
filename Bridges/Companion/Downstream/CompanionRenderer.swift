import CompanionWire
import RelayCore

/// Turns the core's events into the frames one socket sends, live or replayed from its device's
/// queue, and remembers how far each running answer has been cut into chunks for it.
///
/// The order of one turn is the app's: the answer's text chunks, a `complete` chunk,
/// `assistantMessage`, `conversationResult`, then (to the asking device only) the reply.
///
/// The relay's notes (an approval asked or answered) are history, not a run's result: one
/// `assistantMessage` of type `relay_note` each, never chunks (the app would join them to the
/// running answer, and their `complete` chunk would end it), `conversationResult` or reply. The app
/// logs it and shows the approval itself as its own alert (`permissionRequest`, sent by the socket).
struct CompanionRenderer {
    /// How far one running answer went out on this socket.
    struct RunView: Equatable {
        var chunker = ParagraphChunker()
        var startedAt: Int64
        /// The answer so far, as the last progress showed it.
        var latest = ""
    }

    /// The device of the socket: only its own turns get a reply frame.
    let deviceID: String
    private(set) var runs: [String: RunView] = [:]

    init(deviceID: String) { self.deviceID = deviceID }

    /// The frames of `event` in session `sessionID`; `queuedAt` marks a replay from the queue.
    mutating func render(_ event: BusEvent, sessionID: String, now: Int64, queuedAt: Int64?) -> [String] {
        var out = Frames(now: now, queuedAt: queuedAt)
        switch event {
        case .streaming(let progress):
            var view = runs[progress.turn.runID] ?? RunView(startedAt: progress.startedAt)
            for chunk in view.chunker.take(progress.content, final: false) {
                out.add(StreamChunk(sessionId: sessionID, chunk: .init(id: chunk.id, type: "text", content: chunk.content, isFinal: false)))
            }
            view.latest = progress.content
            runs[progress.turn.runID] = view
        case .tool(let tool):
            renderTool(tool, sessionID: sessionID, into: &out)
        case .message(let message) where message.role == .user:
            guard message.deviceID != deviceID else { break }
            let stamp = CompanionTimestamp.string(message.timestampMillis)
            let notice = UserMessageEvent(
                sessionId: sessionID,
                messageId: message.id,
                content: message.content,
                deviceId: message.deviceID,
                timestamp: stamp
            )
            out.add(notice, at: message.timestampMillis)
        case .message(let note) where note.isNote:
            let stamp = CompanionTimestamp.string(note.timestampMillis)
            out.add(
                AssistantMessage(messageId: note.id, sessionId: sessionID, text: note.content, timestamp: stamp, type: "relay_note"),
                at: note.timestampMillis
            )
        case .message(let answer):
            renderAnswer(answer, sessionID: sessionID, into: &out)
        case .turnFailed(let failure):
            renderFailure(failure, sessionID: sessionID, into: &out)
        case .status(let status):
            let line = Progress(sessionId: sessionID, stage: Progress.status, message: status.text, timestamp: CompanionTimestamp.string(out.now))
            out.add(line)
        case .approval(.resolved(let approval, let resolution)):
            let message = CompanionPrompts.resolved(approval, resolution)
            out.add(
                Progress(sessionId: sessionID, stage: Progress.permissionResolved, message: message, timestamp: CompanionTimestamp.string(out.now))
            )
        case .assistantTyping, .approval(.requested):
            // A request becomes the socket's prompt (one at a time: `CompanionPrompts`).
            break
        }
        return out.texts
    }

    private mutating func renderAnswer(_ answer: ChatEvent, sessionID: String, into out: inout Frames) {
        let at = answer.timestampMillis
        var view = runs.removeValue(forKey: answer.turn?.runID ?? answer.id) ?? RunView(startedAt: at)
        for chunk in view.chunker.take(answer.content, final: true) {
            out.add(StreamChunk(sessionId: sessionID, chunk: .init(id: chunk.id, type: "text", content: chunk.content, isFinal: false)), at: at)
        }
        out.add(StreamChunk(sessionId: sessionID, chunk: .init(id: view.chunker.nextChunkID(), type: "complete", content: "", isFinal: true)), at: at)
        let stamp = CompanionTimestamp.string(at)
        let duration = Double(max(0, at - view.startedAt))
        out.add(AssistantMessage(messageId: answer.id, sessionId: sessionID, text: answer.content, timestamp: stamp), at: at)
        out.add(ConversationResult(success: true, result: answer.content, sessionId: sessionID, duration: duration, timestamp: stamp), at: at)
        guard let turn = answer.turn, turn.deviceID == deviceID else { return }
        switch CompanionOrigin(clientID: turn.clientID) {
        case .command(let requestID):
            out.add(ClaudeResponse.answer(answer.content, sessionID: sessionID), requestID: requestID, at: at)
        case .ask(let requestID):
            let result = CLIResult(result: answer.content, sessionID: sessionID, durationMillis: duration)
            out.add(AskResponse(success: true, response: result, error: nil), requestID: requestID, at: at)
        case .stream:
            break
        }
    }

    private mutating func renderFailure(_ failure: TurnFailure, sessionID: String, into out: inout Frames) {
        runs.removeValue(forKey: failure.turn.runID)
        let reason = failure.cause == .aborted ? "the command was aborted" : failure.shown
        let at = failure.timestampMillis
        let stamp = CompanionTimestamp.string(at)
        out.add(ConversationResult(success: false, result: nil, sessionId: sessionID, duration: nil, timestamp: stamp), at: at)
        let origin = failure.turn.deviceID == deviceID ? CompanionOrigin(clientID: failure.turn.clientID) : .stream
        switch origin {
        case .command(let requestID):
            out.add(ClaudeResponse.failure(reason, sessionID: sessionID), requestID: requestID, at: at)
        case .ask(let requestID):
            out.add(AskResponse(success: false, response: nil, error: reason), requestID: requestID, at: at)
        case .stream:
            let error = CompanionError.commandFailed(reason, sessionID: sessionID)
            out.add(error.data, at: at, error: error.envelope)
        }
    }

    /// A tool as the app shows it: `toolUse` and a `tool_use` chunk when it starts, `toolResult`
    /// with its output (at most `ToolActivity.resultLimit` bytes) when it ends. Live only: tools
    /// are never queued.
    private mutating func renderTool(_ tool: ToolProgress, sessionID: String, into out: inout Frames) {
        let activity = tool.activity
        let stamp = CompanionTimestamp.string(out.now)
        switch tool.phase {
        case .started:
            var view = runs[tool.turn.runID] ?? RunView(startedAt: out.now)
            // The text before a tool is a finished paragraph: send it ahead of the tool's chunk.
            if !view.latest.isEmpty, !view.latest.hasSuffix("\n") {
                for chunk in view.chunker.take(view.latest + "\n\n", final: false) {
                    out.add(StreamChunk(sessionId: sessionID, chunk: .init(id: chunk.id, type: "text", content: chunk.content, isFinal: false)))
                }
            }
            let input = JSONValue.parse(activity.inputJSON).flatMap { $0.objectValue == nil ? nil : $0 } ?? .object([:])
            out.add(ToolUse(sessionId: sessionID, toolName: activity.name, toolInput: input, toolId: activity.id, timestamp: stamp))
            // The app drops a tool_use chunk without a name, and an empty chunk is never sent.
            if !activity.name.isEmpty {
                let content = activity.label.flatMap { $0.isEmpty ? nil : $0 } ?? activity.name
                let metadata = StreamChunk.Metadata(toolName: activity.name, toolId: activity.id)
                let chunk = StreamChunk.Chunk(id: view.chunker.nextChunkID(), type: "tool_use", content: content, isFinal: false, metadata: metadata)
                out.add(StreamChunk(sessionId: sessionID, chunk: chunk))
            }
            runs[tool.turn.runID] = view
        case .ended:
            let success = activity.success ?? true
            let result = activity.result ?? ""
            let error = success ? nil : result.isEmpty ? "\(activity.name) failed" : result
            out.add(
                ToolResult(
                    sessionId: sessionID,
                    toolName: activity.name,
                    toolId: activity.id,
                    result: result,
                    success: success,
                    error: error,
                    timestamp: stamp
                )
            )
        }
    }
}

/// The frames of one event, stamped with their original time; replays carry the queue's marks.
private struct Frames {
    let now: Int64
    let queuedAt: Int64?
    var texts: [String] = []

    init(now: Int64, queuedAt: Int64?) {
        self.now = now
        self.queuedAt = queuedAt
    }

    mutating func add<Payload: CompanionPayload>(_ data: Payload, requestID: String? = nil, at original: Int64? = nil, error: ErrorEnvelope? = nil) {
        let at = original ?? now
        // A replayed frame carries the queue's marks instead of the real server's `error` field.
        let queued = queuedAt.map { QueuedMarks(queuedAt: $0, originalAt: at) }
        texts.append(CompanionFrame(data, requestID: requestID, at: at, error: queued == nil ? error : nil, queued: queued).encoded())
    }
}
