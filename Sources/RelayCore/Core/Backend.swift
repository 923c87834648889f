import Dispatch
import Synchronization

/// One user turn handed to a backend.
public struct TurnRequest: Sendable {
    public var userID: String
    /// The device whose message started the turn.
    public var deviceID: String
    public var conversationID: String
    public var text: String
    /// The turn's run id (what clients use to abort it).
    public var runID: String
    /// Where a coding backend works for this conversation, if it has a place.
    public var workingDirectory: String?
    /// The backend's own session id for this conversation, as it last reported it
    /// (`TurnEvent.backendSession`), so it can carry on where it left off.
    public var backendSession: String?
    /// What the user attached to the message, in order (a backend that cannot take them says so
    /// in its answer or leaves them out).
    public var attachments: [TurnAttachment] = []
    /// Plan, do not change anything. A backend that `honoursReadOnly` runs the turn that way
    /// (Claude Code's `plan` permission mode); the others get `readOnlyInstruction` before the text.
    public var readOnly = false

    /// What a backend that cannot run a turn read-only is told first (the Companion server's own words).
    public static let readOnlyInstruction =
        "PLANNING MODE ACTIVE: You MUST NOT modify any code files. You can ONLY create or edit documentation files (*.md, *.txt, README, TODO, CHANGELOG, *.plan). If the user asks you to modify code, politely refuse and offer to create a plan or documentation instead.\n\nUser request: "
    /// The user's settings of the conversation (a backend uses those it understands: Claude Code
    /// its thinking effort).
    public var settings: ConversationSettings

    public init(
        userID: String,
        deviceID: String,
        conversationID: String,
        text: String,
        runID: String = Identifiers.newUUID(),
        workingDirectory: String? = nil,
        backendSession: String? = nil,
        settings: ConversationSettings = ConversationSettings()
    ) {
        self.userID = userID
        self.deviceID = deviceID
        self.conversationID = conversationID
        self.text = text
        self.runID = runID
        self.workingDirectory = workingDirectory
        self.backendSession = backendSession
        self.settings = settings
    }
}

/// What a backend says while it answers a turn.
public enum TurnEvent: Sendable, Equatable {
    /// The assistant started or stopped typing.
    case typing(Bool)
    /// The whole answer so far (not a fragment).
    case progress(String)
    /// A tool started (`success` nil).
    case toolStarted(ToolActivity)
    /// A tool finished (`success` says how, when the backend knows).
    case toolEnded(ToolActivity)
    /// The backend's own id for the conversation's session, handed back on the conversation's
    /// next turn as `TurnRequest.backendSession`; nil forgets the one stored.
    case backendSession(String?)
    /// The backend asks whether a tool may run; the turn waits (and is not silent) until
    /// `TurnHandle.answer` tells it, once.
    case approval(ApprovalAsk)
    /// The backend no longer waits for the answer to its question `requestID`.
    case approvalWithdrawn(requestID: String)
    /// What the run cost and did, as the backend reports it (before its `final` or `failed`).
    case report(TurnReport)
    /// A line about the run that is not its answer ("API overloaded, retrying 2/10"), shown live.
    case status(String)
    /// The complete answer; the turn is over.
    case final(String)
    /// The turn failed; the reason is for logs, not for clients.
    case failed(String)
}

/// The core's hold on a running turn: stops it, and answers the backend's questions
/// (`TurnEvent.approval`). Safe to call from any thread; `cancel` more than once.
public final class TurnHandle: Sendable {
    private let canceller: Mutex<(@Sendable () -> Void)?>
    private let answerer: (@Sendable (String, ApprovalAnswer) -> Void)?

    /// `answer` hears the decision on the backend's question `requestID`; backends that never ask leave it out.
    public init(
        answer: (@Sendable (_ requestID: String, _ answer: ApprovalAnswer) -> Void)? = nil,
        cancel: @escaping @Sendable () -> Void
    ) {
        canceller = Mutex(cancel)
        answerer = answer
    }

    public func cancel() {
        let taken = canceller.withLock { handler -> (@Sendable () -> Void)? in
            defer { handler = nil }
            return handler
        }
        taken?()
    }

    /// The user decided the backend's question `requestID`.
    public func answer(_ requestID: String, _ answer: ApprovalAnswer) { answerer?(requestID, answer) }
}

/// An assistant that answers turns: a built-in one or an account on an upstream server.
///
/// - Important: `start` is called on the loop; `events` may be called from any thread and ends
///   with exactly one `.final` or `.failed`.
public protocol Backend: AnyObject, Sendable {
    var name: String { get }
    /// The version of the agent behind it when it has one (Companion's `welcome` shows Claude Code's).
    var agentVersion: String? { get }
    /// It runs a `TurnRequest.readOnly` turn without changing anything by itself.
    var honoursReadOnly: Bool { get }
    /// Its own slash commands, without the slash, as it last reported them (typed at the start of a
    /// message they reach it); empty when it has none or has not said yet.
    var slashCommands: [String] { get }
    func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnHandle
    /// The relay no longer routes to this backend (a reload removed or replaced it) and no turn
    /// runs on it: let go of what it holds (its link, its processes). Loop thread; once.
    func retire()
    /// The user reset the conversation (`Turns.reset`): its keys name a fresh conversation now, so
    /// let go of what belongs to this one (Claude Code: its process); a backend whose upstream
    /// session is not per conversation resets it there. Loop thread.
    func reset(conversationID: String, reason: ResetReason)
    /// It compacts a conversation's context when a turn says `/compact` (its own command), so the
    /// relay passes `/compact` to it instead of answering it.
    var canCompact: Bool { get }
}

extension Backend {
    public var agentVersion: String? { nil }

    public var honoursReadOnly: Bool { false }
    public var slashCommands: [String] { [] }

    public func retire() {}

    public func reset(conversationID: String, reason: ResetReason) {}

    public var canCompact: Bool { false }
}

/// The core's registry of backends by name: what picks the backend for a conversation (its own,
/// else its protocol's default, else the first backend), and what a reload changes.
///
/// - Important: loop thread only. A backend replaced or removed keeps the turns it is running
///   (they hold it); only turns that start later look it up.
public final class Router {
    public private(set) var backends: [String: any Backend]
    /// The backend for conversations and protocols that name none: the first configured one.
    public private(set) var defaultBackend: String

    public init(backends: [any Backend], defaultBackend: String?) {
        self.backends = Self.byName(backends)
        self.defaultBackend = defaultBackend ?? backends.first?.name ?? ""
    }

    public func backend(named name: String?) -> (any Backend)? {
        backends[name ?? defaultBackend]
    }

    /// The name of the backend that answers `conversation`'s next turn under its protocol's
    /// `policy`: the one it is bound to, else the protocol's default, else the first configured.
    /// The turn runner, `/backend` and `clawrelay conversations` all ask this, so they agree.
    public func backendName(for conversation: Conversation?, policy: TurnPolicy) -> String {
        conversation?.backend ?? policy.backend ?? defaultBackend
    }

    /// Routes to `backends` from now on (the first is the default) and returns the backends that
    /// were routed to and are no longer (removed, or replaced by another object of that name).
    @discardableResult
    public func replace(with backends: [any Backend]) -> [any Backend] {
        let next = Self.byName(backends)
        let dropped = self.backends.values.filter { old in next[old.name].map { $0 !== old } ?? true }
        self.backends = next
        defaultBackend = backends.first?.name ?? ""
        return dropped
    }

    private static func byName(_ backends: [any Backend]) -> [String: any Backend] {
        var byName: [String: any Backend] = [:]
        for backend in backends { byName[backend.name] = backend }
        return byName
    }
}

/// An upstream account's turns, owned by its loop and known by an id of the backend's making.
public protocol UpstreamTurns: AnyObject, SendableMetatype {
    func start(_ turn: TurnRequest, id: String, events: @escaping @Sendable (TurnEvent) -> Void)
    func cancel(_ id: String)
}

extension LoopBound where Value: UpstreamTurns {
    /// A `Backend.start` for an account: the turn starts on the loop (at once when called there)
    /// and its cancellation goes back to the loop. An account sends its attachments' bytes, so
    /// uploaded files are read first, off the loop (a turn cancelled meanwhile never starts).
    public func startTurn(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnHandle {
        let id = Identifiers.newUUID()
        let cancelled = SharedFlag()
        let begin = { @Sendable [loop] (turn: TurnRequest) in
            let start = { @Sendable in if !cancelled.isSet { self.value.start(turn, id: id, events: events) } }
            if loop.isOnLoop { start() } else { loop.execute(start) }
        }
        if turn.attachments.contains(where: { $0.path != nil }) {
            DispatchQueue.global().async {
                var inlined = turn
                inlined.attachments = turn.attachments.compactMap { $0.inlined(limit: TurnAttachment.maxInlinedBytes) }
                begin(inlined)
            }
        } else {
            begin(turn)
        }
        return TurnHandle { [loop] in
            cancelled.set()
            loop.execute { self.value.cancel(id) }
        }
    }
}

/// A one-way switch shared between threads (a turn and its cancellation handle).
public final class SharedFlag: Sendable {
    private let value = Atomic<Bool>(false)

    public init() {}

    public var isSet: Bool { value.load(ordering: .acquiring) }

    public func set() { value.store(true, ordering: .releasing) }
}
