import RelayKit

/// `agent.wait {runId, timeoutMs?}` (OpenClaw's `AgentWaitParamsSchema`): waits for a run (a
/// `chat.send`'s idempotency key) to end, at most `timeoutMs` (default 30 s).
public struct AgentWaitParams: Codable, Equatable, Sendable {
    public var runId: String?
    public var timeoutMs: Int64?

    public init(runId: String, timeoutMs: Int64? = nil) {
        self.runId = runId
        self.timeoutMs = timeoutMs
    }
}

/// `agent.wait`'s answer, as OpenClaw's handler writes it: `ok` (the run answered), `error` (it
/// failed: `error` says why) or `timeout` (it was still running when the wait ended, or it was
/// aborted, which OpenClaw reports as a timeout with `stopReason`). `endedAt` once it ended.
public struct AgentWaitResult: Codable, Equatable, Sendable {
    public var runId: String
    public var status: String
    public var endedAt: Int64?
    public var error: String?
    public var stopReason: String?

    public init(runId: String, status: String, endedAt: Int64? = nil, error: String? = nil, stopReason: String? = nil) {
        self.runId = runId
        self.status = status
        self.endedAt = endedAt
        self.error = error
        self.stopReason = stopReason
    }

    /// Still running (or unknown) when the wait ended.
    public static func timeout(_ runID: String) -> AgentWaitResult { AgentWaitResult(runId: runID, status: "timeout") }
}
