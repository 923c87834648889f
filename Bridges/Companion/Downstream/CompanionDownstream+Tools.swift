import RelayCore

extension CompanionDownstream {
    /// A tool of a running turn as the app shows it: `toolUse` and a `tool_use` chunk when it starts,
    /// `toolResult` when it ends. Live only: tools are never queued.
    func renderTool(_ tool: ToolProgress, on connection: CompanionConnection, add: (String, [String: JSONValue]) -> Void) {
        let session = sessionID(of: tool.conversationID)
        let activity = tool.activity
        let stamp = JSONValue.string(CompanionWire.timestamp(clock.nowMillis()))
        switch tool.phase {
        case .started:
            var view = connection.runs[tool.turn.runID] ?? CompanionConnection.RunView(startedAt: clock.nowMillis())
            // The text before a tool is a finished paragraph: send it ahead of the tool's chunk.
            if !view.latest.isEmpty, !view.latest.hasSuffix("\n") {
                for chunk in view.chunker.take(view.latest + "\n\n", final: false) {
                    add("streamChunk", Self.chunk(session, id: chunk.id, type: "text", content: chunk.content, isFinal: false))
                }
            }
            let input = JSONValue.parse(activity.inputJSON).flatMap { $0.objectValue == nil ? nil : $0 } ?? .object([:])
            add(
                "toolUse",
                [
                    "type": .string("tool_use"), "sessionId": .string(session), "toolName": .string(activity.name), "toolInput": input,
                    "toolId": .string(activity.id), "timestamp": stamp,
                ]
            )
            // The app drops a tool_use chunk without a name, and an empty chunk is never sent.
            if !activity.name.isEmpty {
                let content = activity.label.flatMap { $0.isEmpty ? nil : $0 } ?? activity.name
                let metadata: [String: JSONValue] = ["toolName": .string(activity.name), "toolId": .string(activity.id)]
                add(
                    "streamChunk",
                    Self.chunk(session, id: view.chunker.nextChunkID(), type: "tool_use", content: content, isFinal: false, metadata: metadata)
                )
            }
            connection.runs[tool.turn.runID] = view
        case .ended:
            add(
                "toolResult",
                [
                    "type": .string("tool_result"), "sessionId": .string(session), "toolName": .string(activity.name), "toolId": .string(activity.id),
                    "success": .bool(activity.success ?? true), "timestamp": stamp,
                ]
            )
        }
    }
}
