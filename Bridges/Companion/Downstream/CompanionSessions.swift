/// The live Companion sessions: one per working directory, at most `maxSessions`, closed when
/// idle (their conversations and history stay, and can be continued).
///
/// Pure bookkeeping over an injected time; the downstream resolves conversations.
struct CompanionSessions {
    struct Session: Equatable {
        let sessionID: String
        /// Its conversation (a reset gives the session a fresh one).
        var conversationID: String
        let workingDirectory: String
        let createdAt: Int64
        var lastActivity: Int64
        var backgrounded = false
        var initialPrompt: String?
        /// A command was sent in it.
        var conversationStarted = false
    }

    var maxSessions: Int
    var idleMillis: Int64
    var backgroundIdleMillis: Int64
    private(set) var byID: [String: Session] = [:]

    init(maxSessions: Int, idleMillis: Int64, backgroundIdleMillis: Int64) {
        self.maxSessions = maxSessions
        self.idleMillis = idleMillis
        self.backgroundIdleMillis = backgroundIdleMillis
    }

    var isFull: Bool { byID.count >= maxSessions }

    func session(_ sessionID: String) -> Session? { byID[sessionID] }

    func session(directory: String) -> Session? { byID.values.first { $0.workingDirectory == directory } }

    func session(conversationID: String) -> Session? { byID.values.first { $0.conversationID == conversationID } }

    /// All live sessions, oldest first.
    var all: [Session] { byID.values.sorted { ($0.createdAt, $0.sessionID) < ($1.createdAt, $1.sessionID) } }

    /// Adds a session; false when the limit is reached (a session already live is kept as it is).
    mutating func add(_ session: Session) -> Bool {
        if byID[session.sessionID] != nil { return true }
        guard !isFull else { return false }
        byID[session.sessionID] = session
        return true
    }

    mutating func touch(_ sessionID: String, at millis: Int64, command: Bool = false) {
        byID[sessionID]?.lastActivity = millis
        if command { byID[sessionID]?.conversationStarted = true }
    }

    /// The guide's `streamStart {initialPrompt}`: kept for `sessions/continue` to report.
    mutating func setInitialPrompt(_ sessionID: String, _ prompt: String) {
        if byID[sessionID]?.initialPrompt == nil { byID[sessionID]?.initialPrompt = prompt }
    }

    mutating func setBackgrounded(_ sessionID: String, _ backgrounded: Bool, at millis: Int64) {
        byID[sessionID]?.backgrounded = backgrounded
        byID[sessionID]?.lastActivity = millis
    }

    @discardableResult
    mutating func remove(_ sessionID: String) -> Session? { byID.removeValue(forKey: sessionID) }

    /// A conversation was reset: the session on it goes on with the fresh one.
    mutating func follow(reset old: String, to fresh: String) {
        for (id, session) in byID where session.conversationID == old { byID[id]?.conversationID = fresh }
    }

    /// Closes sessions idle past their limit whose conversation has no turn running or waiting.
    mutating func expire(now: Int64, isBusy: (String) -> Bool) -> [Session] {
        let idle = byID.values.filter { session in
            now - session.lastActivity >= (session.backgrounded ? backgroundIdleMillis : idleMillis) && !isBusy(session.conversationID)
        }
        for session in idle { byID.removeValue(forKey: session.sessionID) }
        return idle
    }
}
