import Logging

/// Wakes devices that are away when an answer lands: one push per device and conversation,
/// coalescing the events that arrive before it is due, held back by `delay` and quiet hours,
/// cancelled when the device returns or the user reads the conversation elsewhere, durable
/// across restarts; the sinks retire dead targets.
///
/// Inert until `enable` hands it the sinks (no `[push]` section: no work at all), but targets are
/// registered either way.
///
/// - Important: loop thread only.
public final class Pushes {
    public struct Settings: Sendable {
        /// How long a push waits for the user to read elsewhere (or for more events to join it).
        public var delayMillis: Int64
        public var quietHours: QuietHours?
        /// A completion that ran longer than this is a long run (Companion's "🎯 Task Completed").
        public var longRunMillis: Int64

        public init(delayMillis: Int64 = 0, quietHours: QuietHours? = nil, longRunMillis: Int64 = 5 * 60_000) {
            self.delayMillis = delayMillis
            self.quietHours = quietHours
            self.longRunMillis = longRunMillis
        }
    }

    /// Builds a protocol's payload; `formatters[protocolName]` or the neutral one.
    public typealias Formatter = (PushNotice, Settings) -> PushContent

    struct Key: Hashable {
        var deviceID: String
        var conversationID: String
    }

    let presence: Presence
    let bus: Bus
    let conversations: Conversations
    let router: Router
    let loop: any LoopScheduler
    let clock: any Clock
    let logger: Logger
    let journal: any PushJournal
    /// In a cluster: who this node is, where the other nodes say the devices are, the pushes
    /// every node stores; nil on a relay on its own.
    let cluster: PushCluster?
    /// The sweep for pushes no live node holds (cluster only).
    var sweepTimer: TimerID?
    var dispatcher: (any PushDispatcher)?
    public private(set) var settings = Settings()
    public var formatters: [String: Formatter] = [:]
    /// Protocols whose devices get no wake-up pushes: their bridge sends each answer itself
    /// (`sendAnswer`), and a wake-up would only repeat it.
    public var answersOnly: Set<String> = []

    var devices: [String: PushDevice] = [:]
    var devicesByUser: [String: Set<String>] = [:]
    private var pending: [Key: PendingPush] = [:]
    private var timers: [Key: TimerID] = [:]
    /// Approval pushes not due yet, by device and approval id (live only, like approvals).
    var approvalTimers: [Key: TimerID] = [:]
    /// Who was pushed an approval that is still pending, by approval id: they get the silent resolved push.
    var approvalsPushed: [String: Set<String>] = [:]
    /// Outcomes per sink, for `/metrics`.
    public private(set) var counts: [String: [PushAttempt.Outcome: Int]] = [:]
    public internal(set) var cancelledCount = 0

    init(
        journal: any PushJournal,
        presence: Presence,
        bus: Bus,
        conversations: Conversations,
        router: Router,
        loop: any LoopScheduler,
        clock: any Clock,
        logger: Logger,
        cluster: PushCluster? = nil
    ) {
        self.journal = journal
        self.cluster = cluster
        self.presence = presence
        self.bus = bus
        self.conversations = conversations
        self.router = router
        self.loop = loop
        self.clock = clock
        self.logger = logger
    }

    public var isEnabled: Bool { dispatcher != nil }
    public var pendingCount: Int { pending.count }

    /// Loads the targets and the pushes a previous run left pending (those are sent when due).
    /// In a cluster the pushes other nodes store are theirs to send: this node takes those no
    /// live node holds, now and at each sweep.
    public func enable(dispatcher: any PushDispatcher, settings: Settings) {
        self.dispatcher = dispatcher
        self.settings = settings
        reloadAll()
        if cluster != nil { return sweep() }
        journal.pendingPushes { [self] result in
            guard case .success(let stored) = result else { return }
            if !stored.isEmpty { logger.info("pushes left pending by the last run", metadata: ["count": "\(stored.count)"]) }
            for push in stored { arm(push) }
        }
    }

    /// A reload changed `[push]`: pushes go through `dispatcher` with `settings` from now on
    /// (enabling them when they were off); what the old dispatcher holds finishes there.
    public func replace(dispatcher: any PushDispatcher, settings: Settings) {
        guard isEnabled else { return enable(dispatcher: dispatcher, settings: settings) }
        self.dispatcher = dispatcher
        self.settings = settings
    }

    /// A reload removed `[push]`: nothing more is sent; pushes pending now are dropped when due.
    public func disable() { dispatcher = nil }

    /// Stores where a device can be woken (one target per device and kind; a retired one comes
    /// back to life); the scheduler uses it from then on. `completion` runs once it is durable.
    public func register(
        deviceID: String,
        kind: PushTarget.Kind,
        token: String,
        platform: String?,
        completion: @escaping (Result<Void, any Error>) -> Void
    ) {
        journal.savePushTarget(deviceID: deviceID, kind: kind, token: token, platform: platform, at: clock.nowMillis()) { [weak self] result in
            if case .success = result {
                self?.reload(deviceID: deviceID)
                self?.cluster?.fabric.send(.pushTargetsChanged(deviceID: deviceID))
            }
            completion(result)
        }
    }

    /// A device's targets changed (registered, or changed by the CLI): re-read them.
    public func reload(deviceID: String) {
        guard isEnabled else { return }
        journal.pushDevice(deviceID) { [self] result in
            guard case .success(let device) = result else { return }
            forget(deviceID)
            if let device { remember(device) }
        }
    }

    /// Re-reads every device's targets.
    func reloadAll() {
        journal.pushDevices { [self] result in
            switch result {
            case .success(let all):
                devices = [:]
                devicesByUser = [:]
                for device in all { remember(device) }
            case .failure(let error): logger.error("push targets could not be loaded", metadata: ["error": "\(error)"])
            }
        }
    }

    private func remember(_ device: PushDevice) {
        devices[device.deviceID] = device
        devicesByUser[device.userID, default: []].insert(device.deviceID)
    }

    private func forget(_ deviceID: String) {
        guard let old = devices.removeValue(forKey: deviceID) else { return }
        devicesByUser[old.userID]?.remove(deviceID)
        if devicesByUser[old.userID]?.isEmpty == true { devicesByUser.removeValue(forKey: old.userID) }
    }

    // MARK: What makes a push, and what stops one

    /// A durable event was handed out: answers and failures make pushes for the user's devices
    /// that did not take it live; devices that did take it live have read it.
    func published(_ event: BusEvent, userID: String, runMillis: Int64) {
        guard isEnabled, let deviceIDs = devicesByUser[userID], !deviceIDs.isEmpty else { return }
        let conversationID = event.conversationID
        let (seq, failed, text): (Int64, Bool, String)
        switch event {
        case .message(let message):
            // The relay's notes are not answers (an approval's note comes with its own push).
            guard message.role == .assistant, !message.isNote else {
                return readLive(userID: userID, conversationID: conversationID, seq: message.seq)
            }
            (seq, failed, text) = (message.seq, false, message.content)
        case .turnFailed(let failure):
            guard failure.cause == .failed else { return }
            (seq, failed, text) = (0, true, failure.reason)
        case .streaming, .assistantTyping, .tool, .status, .approval:
            return
        }
        let now = clock.nowMillis()
        for deviceID in deviceIDs.sorted() where !takesLive(deviceID, conversationID) && !answersOnly.contains(devices[deviceID]?.protocolName ?? "")
        {
            let key = Key(deviceID: deviceID, conversationID: conversationID)
            var push =
                pending[key]
                ?? PendingPush(
                    id: Identifiers.newUUID(),
                    deviceID: deviceID,
                    userID: userID,
                    conversationID: conversationID,
                    count: 0,
                    lastSeq: 0,
                    failed: false,
                    text: "",
                    runMillis: 0,
                    createdAt: now,
                    dueAt: due(now + settings.delayMillis)
                )
            push.count += 1
            push.lastSeq = max(push.lastSeq, seq)
            push.failed = failed
            push.text = String(text.prefix(PendingPush.textLimit))
            push.runMillis = runMillis
            journal.savePush(push)
            arm(push)
        }
        // With a delay, a device that took the event live has read it: the others need no push.
        if settings.delayMillis > 0 { readLive(userID: userID, conversationID: conversationID, seq: seq) }
    }

    func takesLive(_ deviceID: String, _ conversationID: String) -> Bool {
        presence.isForeground(deviceID) && bus.isListening(deviceID: deviceID, to: conversationID)
    }

    /// The user's foreground devices that follow the conversation read up to `seq`.
    private func readLive(userID: String, conversationID: String, seq: Int64) {
        guard pending.keys.contains(where: { $0.conversationID == conversationID && devices[$0.deviceID]?.userID == userID }) else { return }
        let readers = bus.endpoints(of: userID).contains { $0.listens(to: conversationID) && presence.isForeground($0.deviceID) }
        if readers { read(userID: userID, conversationID: conversationID, seq: seq) }
    }

    /// The user read `conversationID` up to `seq` on some device: pushes it covers are dropped.
    public func read(userID: String, conversationID: String, seq: Int64) {
        for (key, push) in pending where push.userID == userID && key.conversationID == conversationID && push.lastSeq <= seq {
            cancel(key, why: "read on another device")
        }
    }

    /// The device is back in the foreground: it sees everything itself.
    func foregrounded(deviceID: String) {
        for key in pending.keys where key.deviceID == deviceID { cancel(key, why: "device in the foreground") }
    }

    private func cancel(_ key: Key, why: String) {
        guard let push = pending.removeValue(forKey: key) else { return }
        if let timer = timers.removeValue(forKey: key) { loop.cancel(timer) }
        journal.deletePush(id: push.id)
        cancelledCount += 1
        logger.debug("push cancelled", metadata: ["device": "\(push.deviceID)", "conversation": "\(push.conversationID)", "why": "\(why)"])
    }

    func hasPending(deviceID: String, conversationID: String) -> Bool { pending[Key(deviceID: deviceID, conversationID: conversationID)] != nil }

    /// When a push made at `millis` may go: after quiet hours.
    func due(_ millis: Int64) -> Int64 { settings.quietHours?.release(millis) ?? millis }

    // MARK: Sending

    func arm(_ push: PendingPush) {
        let key = Key(deviceID: push.deviceID, conversationID: push.conversationID)
        pending[key] = push
        guard timers[key] == nil else { return }
        let wait = Int(max(0, min(push.dueAt - clock.nowMillis(), Int64(Int32.max))))
        timers[key] = loop.schedule(afterMillis: wait) { [weak self] in self?.fire(key) }
    }

    private func fire(_ key: Key) {
        timers.removeValue(forKey: key)
        guard var push = pending[key] else { return }
        // Quiet hours that began while it waited (or a clock change) hold it again.
        let now = clock.nowMillis()
        if due(now) > now {
            push.dueAt = due(now)
            journal.savePush(push)
            return arm(push)
        }
        pending.removeValue(forKey: key)
        guard let device = devices[push.deviceID], let dispatcher else {
            journal.deletePush(id: push.id)
            return
        }
        if let cluster { return sendBurst(push, to: device, cluster: cluster) }
        sendAnswer(push, to: device, via: dispatcher)
    }

    /// Sends an answer push with its conversation's title and backend.
    func sendAnswer(_ push: PendingPush, to device: PushDevice, via dispatcher: any PushDispatcher, claimed: [String] = []) {
        conversations.load(id: push.conversationID) { [self] result in
            let conversation = try? result.get()
            let backend = conversation?.backend ?? router.defaultBackend
            send(push, to: device, conversation: conversation ?? nil, backend: backend, via: dispatcher, claimed: claimed)
        }
    }

    /// Formats `push` in the device's protocol and hands it to the sinks; `claimed`: the stored
    /// pushes it stands for in a cluster.
    func send(
        _ push: PendingPush,
        to device: PushDevice,
        conversation: Conversation?,
        backend: String,
        via dispatcher: any PushDispatcher,
        claimed: [String] = []
    ) {
        let notice = PushNotice(push: push, device: device, conversation: conversation, backendName: backend)
        let content = (formatters[device.protocolName] ?? Self.neutral)(notice, settings)
        dispatcher.dispatch(PushDelivery(push: push, device: device, content: content)) { [weak self] report in
            self?.delivered(push, report, claimed: claimed)
        }
    }

    func delivered(_ push: PendingPush, _ report: PushReport, claimed: [String] = []) {
        if push.kind == .answer { forgetSent(push, claimed: claimed) }
        journal.record(report.attempts, userID: push.userID)
        for attempt in report.attempts {
            let sink = attempt.sink.hasPrefix("webhook") ? "webhook" : attempt.sink
            counts[sink, default: [:]][attempt.outcome, default: 0] += 1
            // Given up after its retries: the device misses this push.
            guard attempt.outcome == .failed else { continue }
            logger.warning(
                "push failed",
                metadata: [
                    "device": "\(attempt.deviceID)", "sink": "\(attempt.sink)", "target": "\(attempt.target)", "status": "\(attempt.status)",
                    "reason": "\(attempt.reason)",
                ]
            )
        }
        let now = clock.nowMillis()
        for (target, reason) in report.retired {
            journal.retire(target, reason: reason, at: now)
            logger.notice(
                "push target retired",
                metadata: ["device": "\(target.deviceID)", "target": "\(target.redacted)", "reason": "\(reason)"]
            )
            guard var device = devices[target.deviceID] else { continue }
            device.targets.removeAll { $0 == target }
            if device.targets.isEmpty { forget(target.deviceID) } else { devices[target.deviceID] = device }
        }
    }

    /// Title: the conversation's title or its backend; body: the answer's start, or a count.
    /// Approvals: "Approval needed" and what waits; resolved ones silently.
    public static func neutral(_ notice: PushNotice, _ settings: Settings) -> PushContent {
        if let approval = approvalContent(notice) { return approval }
        let title = notice.conversation?.title.flatMap { $0.isEmpty ? nil : $0 } ?? notice.backendName
        let body: String
        if notice.push.count > 1 {
            body = "\(notice.push.count) new messages in \(title)"
        } else if notice.push.failed {
            body = "Failed: " + notice.push.text
        } else {
            body = notice.push.text
        }
        return PushContent(title: title, body: String(body.prefix(200)), threadID: notice.push.conversationID)
    }
}
