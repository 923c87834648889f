import Logging

/// How a protocol wants its turns run.
public struct TurnPolicy: Sendable, Equatable {
    /// Turns a device may have waiting behind the conversation's active one.
    public var maxQueuedPerDevice: Int
    /// A turn with no output for this long fails.
    public var inactivityMillis: Int
    /// The backend for conversations not bound to one; nil = the router's default.
    public var backend: String?

    public init(maxQueuedPerDevice: Int = 20, inactivityMillis: Int = 300_000, backend: String? = nil) {
        self.maxQueuedPerDevice = maxQueuedPerDevice
        self.inactivityMillis = inactivityMillis
        self.backend = backend
    }
}

/// How a turn ended.
public enum TurnEnd: Sendable {
    case answered(ChatEvent)
    case failed(TurnFailure)
}

/// What became of a submitted message.
public enum SubmitOutcome: Sendable {
    /// Stored; its turn is running or queued, its answer will land in `answer`. Acknowledge it.
    case accepted(ChatEvent, runID: String, answer: AnswerSlot)
    /// A retry of a stored message: `running` tells whether its turn is active or queued here.
    case duplicate(MessageState, runID: String, running: Bool)
    /// The client id was used before with other content.
    case mismatch
    case rejected(any Error & Sendable)
    case missingAsset(String)
    /// The device already has `maxQueuedPerDevice` turns waiting.
    case queueFull
    /// The store failed; nothing was accepted.
    case storeFailed(any Error)
}

/// The one place a user turn runs, for every protocol.
///
/// A durable user message starts a turn on its conversation's backend. A conversation runs one
/// turn at a time with a FIFO behind it. A turn belongs to its conversation, not to a socket: it
/// completes, is stored and is published whoever is still listening, unless its protocol
/// abandons it when its device goes away. Every turn ends with typing off for the conversation.
///
/// - Important: loop thread only.
public final class Turns {
    final class Turn {
        let ref: TurnRef
        let userID: String
        let conversationID: String
        /// The server id the answer gets, and the seq of its placeholder.
        let answer: AnswerSlot
        var eventID: String { answer.id }
        let text: String
        let policy: TurnPolicy
        /// The message's attachments in the relay's neutral form.
        let attachmentsJSON: String?
        let readOnly: Bool
        var startedAt: Int64 = 0
        var content = ""
        var isFinishing = false
        var handle: TurnHandle?
        /// The backend answering it, once started.
        var backendName = ""
        /// That backend itself: a reload may route its name elsewhere while this turn runs here.
        var backend: (any Backend)?
        /// A relay command answered at once, outside the conversation's FIFO (`/approve` must not
        /// wait behind the turn that waits for it).
        var isAside = false
        var inactivityTimer: TimerID?
        /// When the backend last said something (the inactivity timer measures from it).
        var lastOutputMillis: Int64 = 0
        var stamps = TurnStamps()

        init(_ message: UserMessage, ref: TurnRef, policy: TurnPolicy, answer: AnswerSlot) {
            self.ref = ref
            self.answer = answer
            userID = message.userID
            conversationID = message.conversationID
            text = message.content
            attachmentsJSON = message.attachmentsJSON
            readOnly = message.readOnly
            self.policy = policy
        }
    }

    /// One conversation's active turn, the FIFO behind it, and the messages being stored for it.
    final class Lane {
        var active: Turn?
        var queue: [Turn] = []
        /// Devices of messages handed to the store and not answered yet, in submission order.
        var accepting: [(token: UInt64, deviceID: String)] = []
        /// In a cluster: the first queued turn asked the ledger to run (`claiming`), or was told
        /// to wait for another node's turn (`waitsForClaim`: asked again when the log moves).
        var claiming = false
        var waitsForClaim = false

        var isIdle: Bool { active == nil && queue.isEmpty && accepting.isEmpty }

        /// Queues `turn` before the first turn accepted after it (answer slots follow acceptance).
        func insertInOrder(_ turn: Turn) {
            let index = queue.firstIndex { $0.answer.seq > turn.answer.seq } ?? queue.endIndex
            queue.insert(turn, at: index)
        }

        /// The device's turns that will wait behind the active one (the first pending turn of
        /// the conversation is, or is about to become, the active one).
        func waiting(of deviceID: String) -> Int {
            let pending = [active?.ref.deviceID].compactMap { $0 } + queue.map(\.ref.deviceID) + accepting.map(\.deviceID)
            return pending.dropFirst().count { $0 == deviceID }
        }
    }

    let journal: CoreJournal
    let conversations: Conversations
    let queue: NotificationQueue
    let bus: Bus
    let router: Router
    let loop: any LoopScheduler
    let clock: any Clock
    let logger: Logger
    let stages: StageRecorder
    let counters: RelayCounters
    let approvals: Approvals
    let usage: UsageJournal
    let assets: Assets
    /// In a cluster: who this node is and the cluster's turn queue; nil on a single node.
    let cluster: ClusterLink?
    var lanes: [String: Lane] = [:]
    /// In a cluster: who holds each upstream account, whose turns run there.
    var handover = AccountHolders()
    /// The reads of the turns other nodes handed to this one (`takeHandedTurns`): one at a time.
    let handedReads = CoalescedRun()
    private var nextToken: UInt64 = 0
    /// Bumped whenever a device's turns are abandoned, so messages it had in flight do not start turns.
    var abandonments: [String: Int] = [:]
    /// Who waits for a run to end (request/response protocols, `agent.wait`), by run id.
    var watchers: [String: [RunWatcher]] = [:]
    var nextWatchID: UInt64 = 0
    /// How the last runs ended, for whoever asks after the end (`ending(ofRun:userID:)`).
    var endings = RunEndings(capacity: RunEndings.defaultCapacity)
    /// Who waits for a backend to have no turn running (`whenIdle`).
    var idleWaiters: [(backend: any Backend, done: () -> Void)] = []
    /// Messages to a conversation whose reset is under way, held until its keys name the fresh
    /// one (then they go there), by the conversation being reset.
    var resetting: [String: [HeldMessage]] = [:]
    public internal(set) var completedCount = 0
    public internal(set) var failedCount = 0

    init(
        journal: CoreJournal,
        conversations: Conversations,
        queue: NotificationQueue,
        bus: Bus,
        router: Router,
        loop: any LoopScheduler,
        clock: any Clock,
        logger: Logger,
        stages: StageRecorder,
        counters: RelayCounters,
        approvals: Approvals,
        usage: UsageJournal,
        assets: Assets,
        cluster: ClusterLink?
    ) {
        self.cluster = cluster
        self.assets = assets
        self.counters = counters
        self.approvals = approvals
        self.usage = usage
        self.journal = journal
        self.conversations = conversations
        self.queue = queue
        self.bus = bus
        self.router = router
        self.loop = loop
        self.clock = clock
        self.logger = logger
        self.stages = stages
    }

    /// Stores `message` (idempotently), acknowledges it through `completion`, publishes its user
    /// event and starts or queues its turn. `completion` runs before the user event is published.
    public func submit(_ message: UserMessage, policy: TurnPolicy, completion: @escaping (SubmitOutcome) -> Void) {
        if resetting[message.conversationID] != nil { return hold(message, policy: policy, completion: completion) }
        var message = message
        if let cluster, RelayCommand(message.content)?.isAside != true {
            message.acceptingNode = cluster.node
            message.policyBackend = policy.backend
        }
        let lane = lane(message.conversationID)
        guard lane.waiting(of: message.deviceID) < policy.maxQueuedPerDevice else { return completion(.queueFull) }
        nextToken += 1
        let token = nextToken
        lane.accepting.append((token, message.deviceID))
        let generation = abandonments[message.deviceID, default: 0]
        let targets = queue.targets(userID: message.userID, conversationID: message.conversationID)
        let submittedAt = MonotonicClock.nanos()
        journal.accept(message, now: clock.nowMillis(), queue: targets) { [self] result in
            let committedAt = MonotonicClock.nanos()
            lane.accepting.removeAll { $0.token == token }
            let stillWanted = abandonments[message.deviceID, default: 0] == generation
            switch result {
            case .failure(let error):
                completion(.storeFailed(error))
            case .success(.fresh(var event, let runID, let answer)):
                stages.record(.receivedToSubmitted, from: message.receivedAt, to: submittedAt)
                stages.recordStore(submitted: submittedAt, completed: committedAt, batch: journal.batchTiming, final: false)
                let ref = TurnRef(runID: runID, deviceID: message.deviceID, clientID: message.clientID)
                event.turn = ref
                counters.accepted(deviceID: message.deviceID)
                completion(.accepted(event, runID: runID, answer: answer))
                queue.publish(.message(event), userID: message.userID, queuedFor: targets, seqs: event.seq...max(event.seq, answer.seq))
                if stillWanted {
                    let turn = Turn(message, ref: ref, policy: policy, answer: answer)
                    turn.stamps.received = message.receivedAt
                    turn.stamps.committed = committedAt
                    if let command = RelayCommand(message.content), command.isAside {
                        answerAside(turn, command)
                    } else {
                        enqueue(turn)
                    }
                } else {
                    // Stored, but its device was abandoned meanwhile: no turn, and whoever waits hears so.
                    let failure = TurnFailure(
                        turn: ref,
                        conversationID: message.conversationID,
                        userID: message.userID,
                        cause: .abandoned,
                        reason: "its device disconnected",
                        timestampMillis: clock.nowMillis(),
                        answerID: answer.id
                    )
                    ended(runID, .failed(failure))
                    cluster?.ledger.withdraw(runID: runID)
                }
            case .success(.duplicate(let state, let runID, let answer)):
                let ref = TurnRef(runID: runID, deviceID: message.deviceID, clientID: message.clientID)
                var running = isKnown(ref, in: lane)
                if state == .active, !running, stillWanted {
                    // Acknowledged before and never answered (its socket went away): run it now.
                    let slot = answer ?? AnswerSlot(id: Identifiers.newEventID(), seq: 0)
                    enqueue(Turn(message, ref: ref, policy: policy, answer: slot))
                    running = true
                }
                completion(.duplicate(state, runID: runID, running: running))
            case .success(.mismatch):
                completion(.mismatch)
            case .success(.rejected(let rejection)):
                completion(.rejected(rejection))
            case .success(.missingAsset(let assetID)):
                completion(.missingAsset(assetID))
            }
            dropIfIdle(message.conversationID)
        }
    }

    /// The running turn of a conversation, as progress so far.
    public func activeProgress(in conversationID: String) -> TurnProgress? {
        guard let turn = lanes[conversationID]?.active else { return nil }
        return turn.progress
    }

    /// Calls `handler` once when the run ends, answered or not. Register it before the turn can end
    /// (in the submit completion).
    public func whenEnded(runID: String, _ handler: @escaping (TurnEnd) -> Void) {
        watch(runID: runID, userID: nil, handler)
    }

    /// True while the conversation has a turn running, waiting or being stored.
    public func isBusy(_ conversationID: String) -> Bool { lanes[conversationID].map { !$0.isIdle } ?? false }

    /// Turns waiting behind active ones, over every conversation.
    public var queuedCount: Int { lanes.values.reduce(0) { $0 + $1.queue.count } }

    /// Turns running now.
    public var activeCount: Int { lanes.values.count { $0.active != nil } }

    /// The conversation's lane, made on first use. While a lane exists its conversation stays
    /// cached: the queue targets of its events and the bridges rendering them read its keys.
    func lane(_ conversationID: String) -> Lane {
        if let lane = lanes[conversationID] { return lane }
        let lane = Lane()
        lanes[conversationID] = lane
        conversations.pin(id: conversationID)
        return lane
    }

    func dropIfIdle(_ conversationID: String) {
        guard lanes[conversationID]?.isIdle == true else { return }
        lanes.removeValue(forKey: conversationID)
        conversations.unpin(id: conversationID)
    }

    private func isKnown(_ ref: TurnRef, in lane: Lane) -> Bool {
        let matches = { (turn: Turn) in turn.ref.deviceID == ref.deviceID && turn.ref.clientID == ref.clientID }
        return lane.active.map(matches) == true || lane.queue.contains(where: matches)
    }

    private func enqueue(_ turn: Turn) {
        let lane = lane(turn.conversationID)
        // In a cluster the ledger runs a conversation's turns in acceptance order, so a node's own
        // queue must hold them in that order too (a resumed old message goes before newer ones).
        if cluster != nil { lane.insertInOrder(turn) } else { lane.queue.append(turn) }
        runNext(turn.conversationID)
    }
}

extension Turns.Turn {
    /// The answer so far, as the bus carries it.
    var progress: TurnProgress {
        TurnProgress(turn: ref, eventID: eventID, conversationID: conversationID, content: content, startedAt: startedAt, seq: answer.seq)
    }
}

extension Turns {
    /// A conversation's turns that have not ended: the running one first, then those waiting.
    public func runs(in conversationID: String) -> [TurnProgress] {
        guard let lane = lanes[conversationID] else { return [] }
        return ([lane.active].compactMap { $0 } + lane.queue).map(\.progress)
    }

    /// The user's turns that have not ended, running and queued, as progress so far (a queued
    /// turn has no content yet and `startedAt` 0).
    public func unfinished(userID: String) -> [TurnProgress] {
        lanes.values.flatMap { lane in ([lane.active].compactMap { $0 } + lane.queue).filter { $0.userID == userID }.map(\.progress) }
    }
}
