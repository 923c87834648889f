/// What a run cost and did, as its backend reports it (Claude Code's `result` line).
public struct TurnReport: Sendable, Equatable, Codable {
    /// What the run cost, in US dollars, when the backend knows.
    public var costUSD: Double?
    public var inputTokens: Int?
    public var outputTokens: Int?
    public var cacheReadTokens: Int?
    public var cacheCreationTokens: Int?
    /// The run's wall time as the backend measured it.
    public var durationMillis: Int?
    /// Model round trips in the run.
    public var modelTurns: Int?
    /// Tool calls the run was not allowed to make.
    public var permissionDenials: Int
    /// Why the run stopped, in the backend's words (`completed`, `api_error`, `max_turns`, …).
    public var terminalReason: String?

    public init(
        costUSD: Double? = nil,
        inputTokens: Int? = nil,
        outputTokens: Int? = nil,
        cacheReadTokens: Int? = nil,
        cacheCreationTokens: Int? = nil,
        durationMillis: Int? = nil,
        modelTurns: Int? = nil,
        permissionDenials: Int = 0,
        terminalReason: String? = nil
    ) {
        self.costUSD = costUSD
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.cacheReadTokens = cacheReadTokens
        self.cacheCreationTokens = cacheCreationTokens
        self.durationMillis = durationMillis
        self.modelTurns = modelTurns
        self.permissionDenials = permissionDenials
        self.terminalReason = terminalReason
    }
}

/// A run's report as stored: per conversation and backend, for `clawrelay conversations show`.
public struct TurnReportRecord: Sendable, Equatable {
    public var runID: String
    public var userID: String
    public var conversationID: String
    public var backend: String
    public var report: TurnReport
    public var at: Int64

    public init(runID: String, userID: String, conversationID: String, backend: String, report: TurnReport, at: Int64) {
        self.runID = runID
        self.userID = userID
        self.conversationID = conversationID
        self.backend = backend
        self.report = report
        self.at = at
    }
}

/// The durable side of run reports and approvals: records the CLI lists; nobody waits for them.
public protocol UsageJournal: AnyObject {
    func saveTurnReport(_ record: TurnReportRecord)
    /// Stores (or updates) an approval's record.
    func saveApproval(_ record: ApprovalRecord)
    /// Approvals a previous run left pending can no longer be answered (their turns died with it):
    /// they are recorded as cancelled at `now`.
    func cancelStaleApprovals(now: Int64)
}
