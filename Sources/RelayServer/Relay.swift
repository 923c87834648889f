import ClawlineBridge
import CompanionBridge
import DiscoClawBridge
import Foundation
import GatewayBridge
import LocalBridge
import Logging
import RelayCore
import RelayDiscovery
import RelayHTTP
import RelayStore
import RelayTransport

/// The whole relay in one process: store, audit, bus, backends, bridges and the service loop.
public final class Relay {
    public let config: RelayConfig
    private let logger: Logger
    private let loop: ServiceLoop
    private var store: Store?
    private var audit: AuditLog?
    private var observer: AuditObserver?
    private var clawline: ClawlineDownstream?
    private var gateway: GatewayDownstream?
    private var companion: CompanionDownstream?
    private var discoClaw: DiscoClawDownstream?
    private var desk: OperatorDesk?
    /// Opens each upstream account's link (loop thread).
    private var upstreams: [() -> Void] = []
    private var advertiser: MDNSAdvertiser?
    private var hub: RelayHub?
    private var push: PushWiring?
    /// The REST client of the DiscoClaw upstream accounts (one thread for all of them).
    private var upstreamHTTP: HTTPClient?
    public private(set) var ports: [String: Int] = [:]

    public init(config: RelayConfig, logger: Logger) {
        self.config = config
        self.logger = logger
        self.loop = ServiceLoop(logger: logger)
    }

    /// Opens the data directory, binds every configured listener and starts serving.
    public func start() throws {
        let dataDirectory = config.dataDirectory
        guard config.admin != nil || config.clawline != nil || config.gateway != nil || config.companion != nil || config.discoClaw != nil else {
            throw StartupFailure(
                description: "nothing to serve: the configuration has no listener; add [clawline], [gateway], [companion], [discoclaw] or [admin]"
            )
        }
        try Self.checkCertificates(config)
        try DataDirectory(path: dataDirectory).open(logger: logger)
        let store = try Store(dataDirectory: dataDirectory, executor: loop)
        let failed = try store.write { db in
            try DeviceQueries.resetPresence(db)
            return try MessageQueries.failActive(db, at: SystemClock().nowMillis())
        }
        if !failed.isEmpty { logger.notice("marked turns cut off by the last stop as failed", metadata: ["count": "\(failed.count)"]) }
        try store.write { try OperatorQueries.clearPending($0) }
        self.store = store
        if config.audit.enabled {
            audit = try AuditLog(dataDirectory: dataDirectory, retentionDays: config.audit.retentionDays, startWriter: true)
        }
        let observer = AuditObserver(audit: audit, unaudited: config.audit.admin ? [] : ["admin"])
        self.observer = observer
        loop.frameObserver = observer

        try store.write { try AccountQueries.clear($0) }
        let accountsDirectory = (dataDirectory as NSString).appendingPathComponent("accounts")
        let built = try Self.makeBackends(
            config,
            accountsDirectory: accountsDirectory,
            loop: loop,
            logger: logger,
            http: { [unowned self] in upstreamClient() },
            onState: { [unowned self] name, kind, state, detail in self.hub?.accounts.report(name, kind: kind, state, detail) }
        )
        upstreams = built.connects
        let backends = built.backends
        let exposed = built.exposed
        let journal = StoreJournal(store: store) { [logger] what, error in
            logger.error("store write failed", metadata: ["what": "\(what)", "error": "\(error)"])
        }
        let hub = RelayHub(
            journal: journal,
            router: Router(backends: backends, defaultBackend: nil),
            loop: loop,
            clock: SystemClock(),
            logger: logger
        )
        self.hub = hub
        for backend in config.backends where backend.isUpstream { hub.accounts.register(backend.name, kind: backend.kindName) }
        let fingerprint = try store.write { try PairingLinkQueries.fingerprint($0) }
        push = try PushWiring.start(config, hub: hub, loop: loop, logger: logger)
        if let settings = config.clawline {
            let key = try SigningKey.loadOrCreate(in: dataDirectory)
            let downstream = ClawlineDownstream(
                settings: settings,
                hub: hub,
                loop: loop,
                clock: SystemClock(),
                signingKey: key,
                dataDirectory: dataDirectory,
                logger: logger
            )
            loop.addListener(ClawlineDownstream.listenerConfig(settings), handler: downstream)
            clawline = downstream
        }
        if let settings = config.gateway {
            let downstream = GatewayDownstream(
                settings: settings,
                hub: hub,
                loop: loop,
                clock: SystemClock(),
                dataDirectory: dataDirectory,
                fingerprint: fingerprint,
                logger: logger
            )
            if !exposed.isEmpty {
                downstream.passthrough = NodePassthrough(accounts: exposed, accountsDirectory: accountsDirectory, loop: loop, logger: logger) {
                    [unowned self] name, state, detail in self.hub?.accounts.report(name, kind: "openclaw", state, detail)
                }
            }
            loop.addListener(GatewayDownstream.listenerConfig(settings), handler: downstream)
            gateway = downstream
        }
        if let settings = config.companion {
            let token = try settings.authToken ?? CompanionToken.loadOrCreate(in: dataDirectory)
            let root =
                settings.projectsRoot.map { Self.path($0, relativeTo: config.sourcePath) }
                ?? (dataDirectory as NSString).appendingPathComponent("projects")
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let downstream = CompanionDownstream(
                settings: settings,
                hub: hub,
                loop: loop,
                clock: SystemClock(),
                authToken: token,
                projectsRoot: root,
                logger: logger
            )
            loop.addListener(CompanionDownstream.listenerConfig(settings), handler: downstream)
            companion = downstream
        }
        if let settings = config.discoClaw {
            let downstream = DiscoClawDownstream(settings: settings, hub: hub, clock: SystemClock(), logger: logger)
            loop.addListener(DiscoClawDownstream.listenerConfig(settings), handler: downstream)
            discoClaw = downstream
        }
        if let admin = config.admin {
            let handler = AdminHandler { [unowned self] in self.metricsText() }
            loop.addListener(ListenerConfig(name: "admin", host: admin.host, port: admin.port, pingIntervalMillis: 0), handler: handler)
        }
        let desk = try OperatorDesk(
            store: store,
            loop: loop,
            clock: SystemClock(),
            hub: hub
        )
        // The core starts with the stored devices, so bearer tokens work from the first request.
        hub.devices.preload(try store.read { try DeviceQueries.all($0) })
        ports = try loop.start()
        loop.execute(with: hub) { $0.start() }
        if let clawline { loop.execute(with: clawline) { $0.start() } }
        if let gateway { loop.execute(with: gateway) { $0.start() } }
        if let companion { loop.execute(with: companion) { $0.start() } }
        if let discoClaw { loop.execute(with: discoClaw) { $0.start() } }
        for connect in upstreams { loop.execute(with: connect) { $0() } }
        self.desk = desk
        loop.execute(with: desk) { $0.start() }
        try writeListenersFile()
        if let settings = config.gateway, settings.mdns, let port = ports["gateway"] {
            advertise(settings, port: port, fingerprint: fingerprint, bots: backends.count)
        }
    }

    /// mDNS through Avahi: `_openclaw-gw._tcp` as real gateways advertise it, `_openclaw._tcp` as the
    /// seed's clients browse for. A missing daemon is logged, not fatal.
    private func advertise(_ settings: GatewaySettings, port: Int, fingerprint: String, bots: Int) {
        let host = settings.lanHost ?? settings.host
        var gatewayTXT = ["role=gateway", "displayName=\(settings.name)", "lanHost=\(host)", "gatewayPort=\(port)", "transport=gateway"]
        if settings.tlsCertificatePath != nil { gatewayTXT.append("gatewayTls=true") }
        let advertiser = MDNSAdvertiser(
            services: [
                .init(name: settings.name, type: "_openclaw-gw._tcp", port: port, txt: gatewayTXT),
                .init(
                    name: settings.name,
                    type: "_openclaw._tcp",
                    port: port,
                    txt: ["fp=\(fingerprint)", "name=\(settings.name)", "bots=\(bots)", "ver=3"]
                ),
            ],
            logger: logger
        )
        do {
            try advertiser.start()
            self.advertiser = advertiser
        } catch {
            logger.warning("mDNS advertisement off", metadata: ["error": "\(error)"])
        }
    }

    /// The `listen` addresses as bound, e.g. `["clawline": "127.0.0.1:18800"]`.
    public var boundAddresses: [String: String] {
        var out: [String: String] = [:]
        if let clawline = config.clawline, let port = ports["clawline"] { out["clawline"] = Self.format(host: clawline.host, port: port) }
        if let gateway = config.gateway, let port = ports["gateway"] { out["gateway"] = Self.format(host: gateway.host, port: port) }
        if let companion = config.companion, let port = ports["companion"] { out["companion"] = Self.format(host: companion.host, port: port) }
        if let discoClaw = config.discoClaw, let port = ports["discoclaw"] { out["discoclaw"] = Self.format(host: discoClaw.host, port: port) }
        if let admin = config.admin, let port = ports["admin"] { out["admin"] = Self.format(host: admin.host, port: port) }
        return out
    }

    /// A path from the config file, taken relative to the file's folder when it is relative.
    static func path(_ path: String, relativeTo configFile: String?) -> String {
        guard !path.hasPrefix("/"), let configFile else { return path }
        return ((configFile as NSString).deletingLastPathComponent as NSString).appendingPathComponent(path)
    }

    private static func format(host: String, port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private func writeListenersFile() throws {
        let path = (config.dataDirectory as NSString).appendingPathComponent("listeners.json")
        let json = JSONValue.object(boundAddresses.mapValues { .string($0) }).encoded()
        try Data(json.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// Closes every socket with 1001, lets the store and audit commit what they hold, then returns.
    public func stop() {
        advertiser?.stop()
        // Turns still running end first, so their askers get an error frame before the 1001 close.
        if let hub {
            loop.execute(with: hub) { [logger] hub in
                let ended = hub.turns.abortAll(reason: "the relay is stopping")
                if ended > 0 { logger.notice("turns cut by the stop", metadata: ["count": "\(ended)"]) }
            }
        }
        loop.stop(graceMillis: 2_000)
        push?.client.shutdown()
        upstreamHTTP?.shutdown()
        store?.close()
        audit?.close()
    }

    /// The one HTTP client every DiscoClaw account shares (its own thread), made on first use.
    private func upstreamClient() -> HTTPClient {
        if let upstreamHTTP { return upstreamHTTP }
        let client = HTTPClient(maxOutstanding: 1_000, name: "upstream", logger: logger)
        upstreamHTTP = client
        return client
    }

    /// Called on the loop by the admin listener.
    private func metricsText() -> String {
        var metrics = MetricsText()
        metrics.add("clawrelay_build_info", "gauge", "The relay's version (always 1).", [("version=\"\(RelayVersion.current)\"", 1)])
        let stats = clawline?.stats ?? ClawlineStats()
        metrics.add(
            "clawrelay_connections",
            "gauge",
            "Open client WebSockets by protocol.",
            [
                ("protocol=\"clawline\"", Double(stats.connections)), ("protocol=\"gateway\"", Double(gateway?.connectionCount ?? 0)),
                ("protocol=\"companion\"", Double(companion?.connectionCount ?? 0)),
                ("protocol=\"discoclaw\"", Double(discoClaw?.connectionCount ?? 0)),
            ]
        )
        if let companion { metrics.add("clawrelay_companion_sessions", "gauge", "Live Companion sessions.", Double(companion.liveSessionCount)) }
        metrics.add(
            "clawrelay_frames_total",
            "counter",
            "Frames and HTTP messages seen at the transport edge.",
            [("direction=\"in\"", Double(observer?.framesIn ?? 0)), ("direction=\"out\"", Double(observer?.framesOut ?? 0))]
        )
        metrics.add(
            "clawrelay_bytes_total",
            "counter",
            "Payload bytes at the transport edge.",
            [("direction=\"in\"", Double(observer?.bytesIn ?? 0)), ("direction=\"out\"", Double(observer?.bytesOut ?? 0))]
        )
        metrics.add("clawrelay_messages_accepted_total", "counter", "Client messages made durable and acknowledged.", Double(stats.messagesAccepted))
        metrics.add(
            "clawrelay_turns_total",
            "counter",
            "Backend turns by outcome.",
            [("outcome=\"completed\"", Double(hub?.turns.completedCount ?? 0)), ("outcome=\"failed\"", Double(hub?.turns.failedCount ?? 0))]
        )
        metrics.add("clawrelay_active_turns", "gauge", "Turns running now.", Double(hub?.turns.activeCount ?? 0))
        let presence = hub?.presence.counts ?? [:]
        metrics.add(
            "clawrelay_devices",
            "gauge",
            "Devices seen since start, by presence.",
            DevicePresence.State.allCases.map { ("state=\"\($0.rawValue)\"", Double(presence[$0] ?? 0)) }
        )
        metrics.add(
            "clawrelay_queue_drained_total",
            "counter",
            "Queued events delivered to returning devices.",
            Double(hub?.queue.drainedEvents ?? 0)
        )
        if let accounts = hub?.accounts.states, !accounts.isEmpty {
            let samples = accounts.mapValues(\.state).sorted { $0.key < $1.key }.flatMap { account, current in
                LinkState.allCases.map { state in ("account=\"\(account)\",state=\"\(state.rawValue)\"", state == current ? 1.0 : 0.0) }
            }
            metrics.add("clawrelay_upstream_link", "gauge", "Upstream account link state (1 = current).", samples)
        }
        metrics.add("clawrelay_queued_turns", "gauge", "Turns waiting behind a conversation's active one.", Double(hub?.turns.queuedCount ?? 0))
        metrics.add(
            "clawrelay_pending_pairings",
            "gauge",
            "Pairing requests waiting for an admin.",
            Double(hub?.devices.pairing.requests().count ?? 0)
        )
        metrics.add("clawrelay_typing_devices", "gauge", "Devices whose user is typing.", Double(stats.typingDevices))
        if let hub {
            PushWiring.metrics(hub.pushes, service: push?.service, into: &metrics)
            Self.stageMetrics(hub.stages, into: &metrics)
        }
        metrics.add("clawrelay_audit_queue_depth", "gauge", "Audit entries waiting for the writer.", Double(audit?.queueDepth ?? 0))
        metrics.add("clawrelay_audit_rows_total", "counter", "Audit rows written.", Double(audit?.writtenCount ?? 0))
        if let storeStats = store?.stats {
            metrics.add("clawrelay_store_batches_total", "counter", "Store transactions committed.", Double(storeStats.batches))
            metrics.add("clawrelay_store_operations_total", "counter", "Store operations run.", Double(storeStats.operations))
            metrics.add("clawrelay_store_busy_seconds_total", "counter", "Time the store writer spent in transactions.", storeStats.busySeconds)
            metrics.add("clawrelay_store_last_batch_seconds", "gauge", "Duration of the last store transaction.", storeStats.lastBatchSeconds)
        }
        return metrics.text
    }
}
