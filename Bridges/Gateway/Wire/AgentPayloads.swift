import RelayKit

/// The `agent` event: one frame of a run's work (`AgentEventSchema` in OpenClaw's
/// `packages/gateway-protocol/src/schema/agent.ts`, with the `sessionKey` its gateway adds when
/// it fans the frame out to operators). `seq` counts the run's frames 1, 2, 3, … as the socket sees
/// them; `data` depends on `stream`: `lifecycle` (`AgentLifecycleData`), `assistant`
/// (`AgentAssistantData`) or `tool` (`AgentToolData`).
public struct AgentEvent: Codable, Equatable, Sendable {
    public var runId: String
    public var seq: Int64
    public var stream: String
    public var ts: Int64
    public var sessionKey: String?
    public var data: JSONValue

    public init(runId: String, seq: Int64, stream: String, ts: Int64, sessionKey: String?, data: JSONValue) {
        self.runId = runId
        self.seq = seq
        self.stream = stream
        self.ts = ts
        self.sessionKey = sessionKey
        self.data = data
    }
}

/// An `agent` payload without its `data`, to write one frame for several seq counts from a `data`
/// encoded once (the assistant stream carries the whole answer so far).
public struct AgentEventEnvelope: Codable, Equatable, Sendable {
    public var runId: String
    public var seq: Int64
    public var sessionKey: String
    public var stream: String
    public var ts: Int64

    public init(runId: String, seq: Int64, sessionKey: String, stream: String, ts: Int64) {
        self.runId = runId
        self.seq = seq
        self.sessionKey = sessionKey
        self.stream = stream
        self.ts = ts
    }

    /// The payload with `dataJSON` (an encoded object): byte for byte what `GatewayJSON` writes for
    /// the whole `AgentEvent`, whose sorted keys put `data` first.
    public func payloadJSON(dataJSON: String) -> String {
        #"{"data":"# + dataJSON + "," + GatewayJSON.encode(self).dropFirst()
    }
}

/// `lifecycle`: `start` when the run starts, then `end` (answered, or `aborted`) or `error`.
public struct AgentLifecycleData: Codable, Equatable, Sendable {
    public var phase: String
    public var startedAt: Int64?
    public var endedAt: Int64?
    public var aborted: Bool?
    public var stopReason: String?
    public var error: String?

    public init(phase: String, startedAt: Int64?, endedAt: Int64? = nil) {
        self.phase = phase
        self.startedAt = startedAt
        self.endedAt = endedAt
    }
}

/// `assistant`: the answer so far (`text`) and what this frame added (`delta`; the whole text
/// when the answer was rewritten rather than extended).
public struct AgentAssistantData: Codable, Equatable, Sendable {
    public var text: String
    public var delta: String

    public init(text: String, delta: String) {
        self.text = text
        self.delta = delta
    }
}

/// `tool`: `start` with the tool's input (`args`), then `result` with how it ended and what it
/// returned (`{content: [{type: "text", text}]}`, as OpenClaw's tools write results). `meta` is a
/// one-line label (a command, a path).
public struct AgentToolData: Codable, Equatable, Sendable {
    public struct Result: Codable, Equatable, Sendable {
        public var content: [ChatMessage.Block]

        public init(text: String) { content = [ChatMessage.Block(text: text)] }
    }

    public var phase: String
    public var name: String
    public var toolCallId: String
    public var args: JSONValue?
    public var meta: String?
    public var isError: Bool?
    public var result: Result?

    public init(phase: String, name: String, toolCallId: String) {
        self.phase = phase
        self.name = name
        self.toolCallId = toolCallId
    }
}
