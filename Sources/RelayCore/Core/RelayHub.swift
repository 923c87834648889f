import Logging

/// Everything durable the core uses, as one journal: RelayStore's SQLite journal in the relay,
/// RelayTesting's memory journal in tests. A second store implements these protocols and nothing
/// in the core or a bridge changes.
public typealias RelayJournal = CoreJournal & DeviceJournal & HistoryJournal & AssetJournal & AccountJournal & PushJournal & UsageJournal

/// The core every bridge talks to: devices and pairing, conversations, history, turns, presence,
/// queues, pushes and the bus, over one journal, one loop and one clock. It owns every piece of
/// state a client can change or read; bridges decode, call it, and encode.
///
/// - Important: loop thread only (tests run it on a manual loop with a test clock).
public final class RelayHub {
    public struct Settings: Sendable {
        /// How often expired queue entries are purged and idle background devices go offline.
        public var sweepMillis: Int
        /// A background device with no socket for this long counts as offline.
        public var backgroundTTLMillis: Int64
        /// How long reads of messages shown live (`shown`) are gathered before they move cursors.
        public var shownReadMillis: Int
        /// How long devices' last-seen times are gathered before they are written.
        public var seenFlushMillis: Int
        /// Conversations kept in memory at most (the journal has them all).
        public var conversationCacheLimit: Int

        public init(
            sweepMillis: Int = 60_000,
            backgroundTTLMillis: Int64 = 4 * 3_600_000,
            shownReadMillis: Int = 250,
            seenFlushMillis: Int = 1_000,
            conversationCacheLimit: Int = 20_000
        ) {
            self.sweepMillis = sweepMillis
            self.backgroundTTLMillis = backgroundTTLMillis
            self.shownReadMillis = shownReadMillis
            self.seenFlushMillis = seenFlushMillis
            self.conversationCacheLimit = conversationCacheLimit
        }
    }

    public let journal: any RelayJournal
    public let router: Router
    public let loop: any LoopScheduler
    public let clock: any Clock
    public let logger: Logger
    public let presence: Presence
    public let bus: Bus
    public let queue: NotificationQueue
    public let pushes: Pushes
    public let conversations: Conversations
    public let turns: Turns
    /// Conversation creations, changes and read cursor moves, for bridges that list conversations.
    public let changes = ConversationChanges()
    public let cursors: ReadCursors
    /// Every device of every protocol, and pairing requests.
    public let devices: Devices
    /// Reads of the history: replays, timelines, summaries.
    public let history: History
    /// Uploaded files' metadata.
    public let assets: Assets
    /// Upstream accounts and their link states.
    public let accounts: Accounts
    /// Backends' questions to the user (may this tool run?), asked of every device of the user.
    public let approvals: Approvals
    /// What `/metrics` counts, by protocol.
    public let counters: RelayCounters
    /// In a cluster: other nodes' events read from the log and handed out here in stream order;
    /// nil on a single node.
    public let delivery: ClusterDelivery?
    /// Per-stage latency of the messages that pass through the core; bridges record their own stages here too.
    public let stages = StageRecorder()
    private let settings: Settings
    /// Reads of messages shown live, newest seq per user and conversation, until the next flush.
    private var shownReads: [ShownRead: Int64] = [:]

    public init(
        journal: any RelayJournal,
        router: Router,
        loop: any LoopScheduler,
        clock: any Clock,
        logger: Logger,
        settings: Settings = Settings(),
        cluster: ClusterLink? = nil
    ) {
        self.journal = journal
        self.router = router
        self.loop = loop
        self.clock = clock
        self.logger = logger
        self.settings = settings
        presence = Presence(clock: clock)
        bus = Bus(presence: presence)
        counters = RelayCounters(presence: presence)
        conversations = Conversations(journal: journal, clock: clock, changes: changes, cacheLimit: settings.conversationCacheLimit)
        cursors = ReadCursors(journal: journal, clock: clock, changes: changes)
        devices = Devices(
            journal: journal,
            loop: loop,
            clock: clock,
            logger: logger,
            seenFlushMillis: settings.seenFlushMillis,
            shared: cluster != nil,
            refreshMillis: cluster?.deviceRefreshMillis ?? 2_000
        )
        delivery = cluster.map { [bus, presence, conversations] in
            ClusterDelivery(link: $0, bus: bus, presence: presence, conversations: conversations, loop: loop, logger: logger)
        }
        history = History(journal: journal)
        assets = Assets(journal: journal)
        accounts = Accounts(journal: journal, clock: clock, logger: logger)
        pushes = Pushes(
            journal: journal,
            presence: presence,
            bus: bus,
            conversations: conversations,
            router: router,
            loop: loop,
            clock: clock,
            logger: logger,
            cluster: cluster.flatMap { link in
                guard let presence = journal as? any NodePresenceJournal, let claims = journal as? any PushClaims else { return nil }
                return PushCluster(node: link.node, presence: presence, claims: claims, fabric: link.fabric)
            }
        )
        queue = NotificationQueue(
            journal: journal,
            presence: presence,
            bus: bus,
            conversations: conversations,
            pushes: pushes,
            cursors: cursors,
            delivery: delivery,
            clock: clock
        )
        approvals = Approvals(
            journal: journal,
            presence: presence,
            deviceName: { [journal] deviceID, done in journal.device(id: deviceID) { done((try? $0.get())??.claimedName) } },
            loop: loop,
            clock: clock,
            logger: logger
        )
        turns = Turns(
            journal: journal,
            conversations: conversations,
            queue: queue,
            bus: bus,
            router: router,
            loop: loop,
            clock: clock,
            logger: logger,
            stages: stages,
            counters: counters,
            approvals: approvals,
            usage: journal,
            assets: assets,
            cluster: cluster
        )
        accounts.onReport = { [weak turns] account, state in turns?.accountReported(account, state) }
        delivery?.onMoved = { [weak turns] in turns?.retryClaims() }
        delivery?.onRemoteEvent = { [weak queue, weak turns] event, userID in
            queue?.handOutRemote(event, userID: userID)
            turns?.endedElsewhere(event)
        }
        delivery?.onControl = { [weak self] control in self?.apply(control) }
        approvals.observe { [weak self] update in self?.approvalChanged(update) }
        presence.onChange = { [weak self] deviceID, entry, state in self?.presenceChanged(deviceID, entry, state) }
        if let delivery { changes.observe { [weak delivery] change in delivery?.changed(change) } }
    }

    /// Starts the periodic sweep (and in a cluster, the bearer index's refresh). Loop thread.
    public func start() {
        journal.cancelStaleApprovals(now: clock.nowMillis())
        delivery?.start()
        devices.refreshBearersPeriodically()
        loop.schedule(afterMillis: settings.sweepMillis) { [weak self] in
            guard let self else { return }
            queue.purge()
            presence.expire(ttlMillis: settings.backgroundTTLMillis)
            devices.flush()
            start()
        }
    }

    /// The relay is stopping: running and queued turns end (their askers hear why), last-seen times
    /// are written, and `completion` gets how many turns ended once all of that is durable and out.
    public func stop(reason: String, completion: @escaping (Int) -> Void) {
        let ended = turns.abortAll(reason: reason)
        devices.flush()
        journal.barrier { completion(ended) }
    }

    /// A device that returns to the foreground needs no push and gets its queue at once, on its
    /// newest socket.
    private func presenceChanged(_ deviceID: String, _ entry: Presence.Entry, _ state: DevicePresence.State) {
        journal.recordPresence(deviceID: deviceID, state: state, now: clock.nowMillis())
        if let cluster = pushes.cluster {
            cluster.presence.recordPresence(deviceID: deviceID, on: cluster.node, state: state, now: clock.nowMillis())
        }
        logger.debug("presence", metadata: ["device": "\(deviceID)", "protocol": "\(entry.protocolName)", "state": "\(state.rawValue)"])
        if state == .foreground { pushes.foregrounded(deviceID: deviceID) }
        guard state == .foreground, case .queue = entry.delivery, let endpoint = bus.newestEndpoint(ofDevice: deviceID) else { return }
        queue.drain(deviceID: deviceID, to: endpoint)
    }

    /// The device's user read `conversationID` up to `seq` there (history fetched, marked read):
    /// see `read(userID:conversationID:seq:completion:)`. A device the core does not know is ignored.
    public func read(deviceID: String, conversationID: String, seq: Int64) {
        guard let userID = presence.entries[deviceID]?.userID else { return }
        read(userID: userID, conversationID: conversationID, seq: seq)
    }

    /// The user read `conversationID` up to `seq` on some device: pending pushes that covers are
    /// dropped and the user's read cursor moves there (never backwards; observers of `changes`
    /// hear it). `completion` gets the cursor when it moved.
    public func read(userID: String, conversationID: String, seq: Int64, completion: ((Result<ReadCursor?, any Error>) -> Void)? = nil) {
        pushes.read(userID: userID, conversationID: conversationID, seq: seq)
        cursors.read(userID: userID, conversationID: conversationID, seq: seq, completion: completion)
    }

    /// A foreground device showed the user's event `seq` of `conversationID` as it arrived (a chat
    /// app on screen shows every message it receives): it counts as read, as if fetched. Such
    /// reads are gathered for `shownReadMillis` and applied as one `read` per conversation, so a
    /// device that shows every message costs one cursor write per conversation and interval, not
    /// one per message. A device that is not in the foreground reads nothing.
    public func shown(deviceID: String, conversationID: String, seq: Int64) {
        guard let entry = presence.entries[deviceID], entry.presence.state == .foreground else { return }
        let key = ShownRead(userID: entry.userID, conversationID: conversationID)
        if shownReads.isEmpty {
            loop.schedule(afterMillis: settings.shownReadMillis) { [weak self] in self?.flushShownReads() }
        }
        if seq > shownReads[key] ?? 0 { shownReads[key] = seq }
    }

    private func flushShownReads() {
        let reads = shownReads
        shownReads = [:]
        for (key, seq) in reads { read(userID: key.userID, conversationID: key.conversationID, seq: seq) }
    }

    /// Registers a live socket of a device: it joins the bus and the device's presence.
    public func attach(_ endpoint: DeviceEndpoint, socket: UInt64, userID: String, protocolName: String, delivery: MissedDelivery) {
        presence.register(deviceID: endpoint.deviceID, userID: userID, protocolName: protocolName, delivery: delivery)
        bus.register(endpoint, user: userID)
        self.delivery?.follow(userID)
        presence.signal(.connected(socket: socket), deviceID: endpoint.deviceID)
    }

    /// Lets an attached socket also hear a shared audience: the events of the conversations that
    /// audience owns (every admin device hears the admin channel). `detach` does not undo this;
    /// call `leave(_:audience:)` first.
    public func join(_ endpoint: DeviceEndpoint, audience: String) {
        bus.register(endpoint, user: audience)
        delivery?.follow(audience)
    }

    public func leave(_ endpoint: DeviceEndpoint, audience: String) { bus.unregister(endpoint, user: audience) }

    /// The socket closed. Returns true when it was the device's last one.
    @discardableResult
    public func detach(_ endpoint: DeviceEndpoint, socket: UInt64, userID: String) -> Bool {
        bus.unregister(endpoint, user: userID)
        queue.endpointClosed(deviceID: endpoint.deviceID)
        presence.signal(.disconnected(socket: socket), deviceID: endpoint.deviceID)
        return presence.entries[endpoint.deviceID]?.presence.sockets.isEmpty ?? true
    }
}

private struct ShownRead: Hashable {
    var userID: String
    var conversationID: String
}
