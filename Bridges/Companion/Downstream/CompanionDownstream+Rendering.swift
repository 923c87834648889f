import RelayCore

/// What started a turn, carried in its client id so a queued answer finds its reply form again.
enum CompanionOrigin {
    /// `claudeCommand`: answered with `claudeResponse` and the request id.
    case command(requestID: String)
    /// `ask`: answered with `askResponse` and the request id.
    case ask(requestID: String)
    /// `streamStart`/`streamSend` or REST: no reply frame.
    case stream

    init(clientID: String) {
        if clientID.hasPrefix("cmd:") {
            self = .command(requestID: String(clientID.dropFirst(4)))
        } else if clientID.hasPrefix("ask:") {
            self = .ask(requestID: String(clientID.dropFirst(4)))
        } else {
            self = .stream
        }
    }
}

extension CompanionDownstream {
    /// The session id a conversation has for Companion clients.
    func sessionID(of conversationID: String) -> String {
        hub.conversations.key(of: conversationID, scheme: CompanionKeys.session) ?? conversationID
    }

    /// Writes a core event to one socket, as live frames or (with `queuedAt`) as a queued replay;
    /// `written` runs once its last frame is on the wire.
    func render(_ event: BusEvent, to connection: CompanionConnection, queuedAt: Int64?, written: (() -> Void)?) {
        var frames: [String] = []
        let now = clock.nowMillis()
        func add(_ type: String, requestID: String? = nil, _ data: [String: JSONValue], original: Int64? = nil, more: [String: JSONValue] = [:]) {
            var extra = more
            if let queuedAt {
                extra = [
                    "_queued": .bool(true), "_queuedAt": .string(CompanionWire.timestamp(queuedAt)),
                    "_originalTimestamp": .string(CompanionWire.timestamp(original ?? now)),
                ]
            }
            frames.append(CompanionWire.frame(type, requestID: requestID, at: original ?? now, data, extra: extra))
        }
        switch event {
        case .streaming(let progress):
            var view = connection.runs[progress.turn.runID] ?? CompanionConnection.RunView(startedAt: progress.startedAt)
            let session = sessionID(of: progress.conversationID)
            for chunk in view.chunker.take(progress.content, final: false) {
                add("streamChunk", Self.chunk(session, id: chunk.id, type: "text", content: chunk.content, isFinal: false))
            }
            view.latest = progress.content
            connection.runs[progress.turn.runID] = view
        case .tool(let tool):
            renderTool(tool, on: connection, add: { add($0, $1) })
        case .message(let message) where message.role == .user:
            guard message.deviceID != connection.deviceID else { break }
            add(
                "userMessage",
                [
                    "sessionId": .string(sessionID(of: message.conversationID)), "messageId": .string(message.id),
                    "content": .string(message.content),
                    "deviceId": message.deviceID.map(JSONValue.string) ?? .null,
                    "timestamp": .string(CompanionWire.timestamp(message.timestampMillis)),
                ],
                original: message.timestampMillis
            )
        case .message(let answer):
            let session = sessionID(of: answer.conversationID)
            let runID = answer.turn?.runID ?? answer.id
            var view = connection.runs.removeValue(forKey: runID) ?? CompanionConnection.RunView(startedAt: answer.timestampMillis)
            let at = answer.timestampMillis
            for chunk in view.chunker.take(answer.content, final: true) {
                add("streamChunk", Self.chunk(session, id: chunk.id, type: "text", content: chunk.content, isFinal: false), original: at)
            }
            add("streamChunk", Self.chunk(session, id: view.chunker.nextChunkID(), type: "complete", content: "", isFinal: true), original: at)
            let stamp = JSONValue.string(CompanionWire.timestamp(at))
            let duration = JSONValue.double(Double(max(0, at - view.startedAt)))
            add(
                "assistantMessage",
                [
                    "type": .string("assistant_response"), "messageId": .string(answer.id), "sessionId": .string(session),
                    "content": .array([.object(["type": .string("text"), "text": .string(answer.content)])]), "timestamp": stamp,
                ],
                original: at
            )
            add(
                "conversationResult",
                [
                    "type": .string("final_result"), "success": .bool(true), "result": .string(answer.content), "sessionId": .string(session),
                    "duration": duration, "timestamp": stamp,
                ],
                original: at
            )
            if let turn = answer.turn, turn.deviceID == connection.deviceID {
                switch CompanionOrigin(clientID: turn.clientID) {
                case .command(let requestID):
                    add(
                        "claudeResponse",
                        requestID: requestID,
                        ["content": .string(answer.content), "success": .bool(true), "sessionId": .string(session), "error": .null],
                        original: at
                    )
                case .ask(let requestID):
                    add(
                        "askResponse",
                        requestID: requestID,
                        ["success": .bool(true), "response": Self.result(answer.content, session: session, duration: duration), "error": .null],
                        original: at
                    )
                case .stream:
                    break
                }
            }
        case .turnFailed(let failure):
            connection.runs.removeValue(forKey: failure.turn.runID)
            let session = sessionID(of: failure.conversationID)
            let reason = failure.cause == .aborted ? "the command was aborted" : "the assistant failed to answer: \(failure.reason)"
            let at = failure.timestampMillis
            add(
                "conversationResult",
                [
                    "type": .string("final_result"), "success": .bool(false), "sessionId": .string(session),
                    "timestamp": .string(CompanionWire.timestamp(at)),
                ],
                original: at
            )
            let own = failure.turn.deviceID == connection.deviceID
            switch own ? CompanionOrigin(clientID: failure.turn.clientID) : .stream {
            case .command(let requestID):
                add(
                    "claudeResponse",
                    requestID: requestID,
                    ["content": .string(""), "success": .bool(false), "sessionId": .string(session), "error": .string(reason)],
                    original: at
                )
            case .ask(let requestID):
                add("askResponse", requestID: requestID, ["success": .bool(false), "error": .string(reason)], original: at)
            case .stream:
                let error = CompanionError(code: "COMMAND_FAILED", message: reason, sessionID: session)
                add("error", error.data, original: at, more: ["error": error.envelope])
            }
        case .assistantTyping:
            break
        }
        for (index, frame) in frames.enumerated() {
            connection.send(frame, onWritten: index == frames.count - 1 ? written : nil)
        }
        if frames.isEmpty { written?() }
    }

    static func chunk(
        _ session: String,
        id: String,
        type: String,
        content: String,
        isFinal: Bool,
        metadata: [String: JSONValue]? = nil
    ) -> [String: JSONValue] {
        var chunk: [String: JSONValue] = ["id": .string(id), "type": .string(type), "content": .string(content), "isFinal": .bool(isFinal)]
        if let metadata { chunk["metadata"] = .object(metadata) }
        return ["sessionId": .string(session), "isFinal": .bool(isFinal), "chunk": .object(chunk)]
    }

    /// The Claude CLI's JSON result, as `askResponse.response` and `POST /api/ask` carry it.
    static func result(_ text: String, session: String, duration: JSONValue) -> JSONValue {
        .object([
            "type": .string("result"), "subtype": .string("success"), "is_error": .bool(false), "duration_ms": duration, "num_turns": .int(1),
            "result": .string(text), "session_id": .string(session),
        ])
    }
}
