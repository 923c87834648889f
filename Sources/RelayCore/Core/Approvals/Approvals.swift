import Logging

/// Questions a backend asks the user before a tool runs (Claude Code's permission prompts): one
/// core mechanism under every protocol's own UI. An approval is asked of every device of the
/// conversation's user; the first decision wins and everyone hears that it is resolved; nobody
/// answering in time denies it; its turn ending cancels it.
///
/// - Important: loop thread only.
public final class Approvals {
    private struct Pending {
        var approval: Approval
        var respond: (ApprovalAnswer) -> Void
        var timer: TimerID
    }

    /// The longest a question may wait (a backend's timeout is bounded by it).
    static let longestTimeoutMillis = 24 * 3_600_000

    /// How many resolved approvals are remembered, so a late answer hears who was first.
    static let recentLimit = 256

    private let journal: UsageJournal
    private let presence: Presence
    private let deviceName: (String, @escaping (String?) -> Void) -> Void
    private let loop: any LoopScheduler
    private let clock: any Clock
    private let logger: Logger
    private var pending: [String: Pending] = [:]
    /// The latest resolutions, oldest first.
    private var recent: [(approval: Approval, resolution: ApprovalResolution)] = []
    private var observers: [(ApprovalUpdate) -> Void] = []

    /// `deviceName` looks up the name a device is known by (its claimed name), for "Denied by …".
    init(
        journal: UsageJournal,
        presence: Presence,
        deviceName: @escaping (String, @escaping (String?) -> Void) -> Void,
        loop: any LoopScheduler,
        clock: any Clock,
        logger: Logger
    ) {
        self.journal = journal
        self.presence = presence
        self.deviceName = deviceName
        self.loop = loop
        self.clock = clock
        self.logger = logger
    }

    /// Bridges (each in its protocol's form), pushes and notes hear every request and resolution.
    public func observe(_ observer: @escaping (ApprovalUpdate) -> Void) { observers.append(observer) }

    /// Asks the user; `respond` hears the answer once (a decision, the expiry's deny, or a
    /// cancellation's deny).
    @discardableResult
    func open(
        _ ask: ApprovalAsk,
        userID: String,
        conversationID: String,
        runID: String,
        backend: String,
        respond: @escaping (ApprovalAnswer) -> Void
    ) -> Approval {
        let id = Identifiers.newUUID().replacingOccurrences(of: "-", with: "").lowercased()
        let timeoutMillis = min(max(ask.timeoutMillis, 1_000), Self.longestTimeoutMillis)
        let now = clock.nowMillis()
        let approval = Approval(
            id: id,
            shortID: shortID(for: id, userID: userID),
            userID: userID,
            conversationID: conversationID,
            runID: runID,
            backend: backend,
            ask: ask,
            createdAt: now,
            expiresAt: now + Int64(timeoutMillis)
        )
        let timer = loop.schedule(afterMillis: timeoutMillis) { [weak self] in self?.expire(id) }
        pending[id] = Pending(approval: approval, respond: respond, timer: timer)
        journal.saveApproval(ApprovalRecord(approval: approval, resolution: nil))
        logger.info(
            "approval requested",
            metadata: [
                "approval": "\(approval.shortID)", "conversation": "\(conversationID)", "backend": "\(backend)", "tool": "\(ask.toolName)",
                "summary": "\(ask.summary.prefix(200))",
            ]
        )
        publish(.requested(approval))
        return approval
    }

    /// The user's pending approvals, oldest first.
    public func pending(userID: String) -> [Approval] {
        pending.values.map(\.approval).filter { $0.userID == userID }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    /// Every pending approval, oldest first.
    public var all: [Approval] { pending.values.map(\.approval).sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) } }

    /// A pending approval by its full id.
    public func approval(id: String) -> Approval? { pending[id]?.approval }

    /// The user's pending approval that `idOrPrefix` names: its full id, or a unique prefix of 4+ characters.
    public func find(_ idOrPrefix: String, userID: String) -> Result<Approval, ApprovalRefusal> {
        let wanted = idOrPrefix.lowercased()
        if let exact = pending[wanted]?.approval, exact.userID == userID { return .success(exact) }
        guard wanted.count >= 4 else { return .failure(.tooShort(idOrPrefix)) }
        let matches = pending(userID: userID).filter { $0.id.hasPrefix(wanted) }
        switch matches.count {
        case 0:
            let late = recent.last { $0.approval.userID == userID && $0.approval.id.hasPrefix(wanted) }
            return .failure(late.map { .resolved($0.approval, $0.resolution) } ?? .notFound(idOrPrefix))
        case 1: return .success(matches[0])
        default: return .failure(.ambiguous(idOrPrefix))
        }
    }

    /// A device decides: the first decision wins; the backend is answered and everyone is told.
    @discardableResult
    public func decide(
        _ idOrPrefix: String,
        userID: String,
        decision: ApprovalDecision,
        by decider: ApprovalDecider
    ) -> Result<Approval, ApprovalRefusal> {
        switch find(idOrPrefix, userID: userID) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let approval):
            guard approval.decisions.contains(decision) else { return .failure(.notOffered(decision)) }
            resolve(approval.id, decision: decision, cause: .decided, by: decider)
            return .success(approval)
        }
    }

    /// A device of the user decides, known by its name and protocol; `completion` hears what came of it.
    public func decide(
        _ idOrPrefix: String,
        userID: String,
        decision: ApprovalDecision,
        deviceID: String,
        completion: @escaping (Result<Approval, ApprovalRefusal>) -> Void
    ) {
        if case .failure(let refusal) = find(idOrPrefix, userID: userID) { return completion(.failure(refusal)) }
        let protocolName = presence.entries[deviceID]?.protocolName ?? "unknown"
        deviceName(deviceID) { [weak self] name in
            guard let self else { return }
            let decider = ApprovalDecider(deviceID: deviceID, name: name, protocolName: protocolName)
            completion(decide(idOrPrefix, userID: userID, decision: decision, by: decider))
        }
    }

    /// The turn that asked ended (aborted, failed, finished): what it still waits for is cancelled.
    public func cancel(runID: String) {
        for approval in pending.values.map(\.approval) where approval.runID == runID {
            resolve(approval.id, decision: .deny, cause: .cancelled, by: .relay)
        }
    }

    /// The backend no longer waits for its question `requestID` of the run: it is cancelled
    /// (nobody is answered; everyone hears it is resolved).
    func withdraw(requestID: String, runID: String) {
        guard let approval = pending.values.first(where: { $0.approval.runID == runID && $0.approval.requestID == requestID })?.approval else {
            return
        }
        resolve(approval.id, decision: .deny, cause: .cancelled, by: .relay, answering: false)
    }

    /// Whether the run waits for an answer (its backend is not silent then, only waiting).
    public func isWaiting(runID: String) -> Bool { pending.values.contains { $0.approval.runID == runID } }

    private func expire(_ id: String) {
        guard pending[id] != nil else { return }
        resolve(id, decision: .deny, cause: .expired, by: .relay)
    }

    private func resolve(
        _ id: String,
        decision: ApprovalDecision,
        cause: ApprovalResolution.Cause,
        by decider: ApprovalDecider,
        answering: Bool = true
    ) {
        guard let entry = pending.removeValue(forKey: id) else { return }
        loop.cancel(entry.timer)
        let resolution = ApprovalResolution(decision: decision, cause: cause, by: decider, at: clock.nowMillis())
        journal.saveApproval(ApprovalRecord(approval: entry.approval, resolution: resolution))
        recent.append((entry.approval, resolution))
        if recent.count > Self.recentLimit { recent.removeFirst(recent.count - Self.recentLimit) }
        logger.info(
            "approval resolved",
            metadata: [
                "approval": "\(entry.approval.shortID)", "decision": "\(decision.rawValue)", "cause": "\(cause.rawValue)",
                "device": "\(decider.deviceID)", "protocol": "\(decider.protocolName)",
            ]
        )
        if answering {
            entry.respond(
                Self.answer(decision: decision, cause: cause, by: decider, timeoutMillis: entry.approval.expiresAt - entry.approval.createdAt)
            )
        }
        publish(.resolved(entry.approval, resolution))
    }

    /// What the backend is told.
    static func answer(
        decision: ApprovalDecision,
        cause: ApprovalResolution.Cause,
        by decider: ApprovalDecider,
        timeoutMillis: Int64
    ) -> ApprovalAnswer {
        switch (decision, cause) {
        case (.allowOnce, _): .allow(always: false)
        case (.allowAlways, _): .allow(always: true)
        case (.deny, .decided): .deny(message: "Denied by \(decider.name) from \(decider.protocolName)")
        case (.deny, .expired): .deny(message: "Nobody answered the permission request within \(Self.duration(timeoutMillis)); it was denied")
        case (.deny, .cancelled): .deny(message: "The request was cancelled")
        }
    }

    static func duration(_ millis: Int64) -> String {
        millis % 60_000 == 0 ? "\(millis / 60_000) min" : "\(millis / 1000) s"
    }

    /// The shortest prefix of `id`, 4 characters or more, that no pending approval of the user shares.
    private func shortID(for id: String, userID: String) -> String {
        let others = pending.values.map(\.approval).filter { $0.userID == userID }.map(\.id)
        var length = 4
        while length < id.count, others.contains(where: { $0.hasPrefix(id.prefix(length)) }) { length += 1 }
        return String(id.prefix(length))
    }

    private func publish(_ update: ApprovalUpdate) {
        for observer in observers { observer(update) }
    }
}
