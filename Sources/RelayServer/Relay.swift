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
    /// The configuration running now (a reload changes it on the loop).
    public internal(set) var config: RelayConfig
    let logger: Logger
    /// The log level and format a reload may change; nil when the caller set up logging itself.
    let logging: RelayLogging?
    let loop: ServiceLoop
    /// What has started, to stop in reverse order.
    private let components: Components
    /// The Claude Code backends running (a reload adds and retires them).
    let localStops = StopList()
    /// The push HTTP clients (a reload that changes `[push]` adds one).
    let pushStops = StopList()
    /// The TLS files as the listeners loaded them (a reload reports one renewed in place).
    var tlsFiles: TLSFiles?
    private(set) var storage: (any RelayStorage)?
    private(set) var audit: AuditLog?
    private(set) var observer: AuditObserver?
    private(set) var clawline: ClawlineDownstream?
    private(set) var gateway: GatewayDownstream?
    private(set) var companion: CompanionDownstream?
    private(set) var discoClaw: DiscoClawDownstream?
    private var desk: OperatorDesk?
    /// Opens the upstream accounts' links (all at once, or in a cluster those this node holds).
    private(set) var upstreams: UpstreamLinks?
    private var advertiser: MDNSAdvertiser?
    private(set) var hub: RelayHub?
    var push: PushWiring?
    /// The REST client of the DiscoClaw upstream accounts (one thread for all of them).
    private var upstreamHTTP: HTTPClient?
    public private(set) var ports: [String: Int] = [:]

    public init(config: RelayConfig, logger: Logger, logging: RelayLogging? = nil) {
        self.config = config
        self.logger = logger
        self.logging = logging
        self.loop = ServiceLoop(logger: logger, eventLoop: config.eventLoop)
        components = Components(logger: logger)
    }

    /// Opens the data directory, binds every configured listener and starts serving. A part that
    /// cannot start stops the parts started before it (in reverse order) before the error goes up.
    public func start() throws {
        do {
            try startParts()
        } catch {
            components.stopAll()
            throw error
        }
    }

    /// Starts each part in order, registering how it stops (see `Components`).
    private func startParts() throws {
        let dataDirectory = config.dataDirectory
        guard config.admin != nil || config.clawline != nil || config.gateway != nil || config.companion != nil || config.discoClaw != nil else {
            throw StartupFailure(
                description: "nothing to serve: the configuration has no listener; add [clawline], [gateway], [companion], [discoclaw] or [admin]"
            )
        }
        if let problem = ConfigCheck.problems(in: config).first { throw StartupFailure(description: problem.description) }
        // A refusal (another relay on this folder, a busy port) comes before anything is written.
        let directory = DataDirectory(path: dataDirectory)
        try directory.refuseIfServed()
        try Self.checkListenAddresses(config)
        try directory.open(logger: logger)
        tlsFiles = TLSFiles(config)
        let storage = try openStorage()
        components.started("store") { storage.close() }
        let failed = try storage.prepareForStart(now: SystemClock().nowMillis())
        if !failed.isEmpty { logger.notice("marked turns cut off by the last stop as failed", metadata: ["count": "\(failed.count)"]) }
        self.storage = storage
        if config.audit.enabled {
            let audit = try AuditLog(dataDirectory: dataDirectory, retentionDays: config.audit.retentionDays, startWriter: true)
            components.started("audit") { audit.close() }
            self.audit = audit
        }
        let observer = AuditObserver(audit: audit, unaudited: config.audit.admin ? [] : ["admin"])
        self.observer = observer
        loop.frameObserver = observer

        let accountsDirectory = (dataDirectory as NSString).appendingPathComponent("accounts")
        let built = try Self.makeBackends(
            config,
            accountsDirectory: accountsDirectory,
            loop: loop,
            logger: logger,
            http: { [unowned self] in upstreamClient() },
            onState: reportAccountState
        )
        for backend in built.claudeCode { localStops.add(backend) { backend.stop() } }
        // Stopped after the service loop, whose stop ends the turns first (interrupting Claude Code).
        components.started("local backends") { [localStops] in localStops.stopAll() }
        let backends = built.backends
        let exposed = built.exposed
        let hub = RelayHub(
            journal: storage.journal,
            router: Router(backends: backends, defaultBackend: nil),
            loop: loop,
            clock: SystemClock(),
            logger: logger,
            cluster: storage.cluster
        )
        self.hub = hub
        for backend in config.backends where backend.isUpstream { hub.accounts.register(backend.name, kind: backend.kindName) }
        let fingerprint = try storage.gatewayFingerprint()
        components.started("push sinks") { [pushStops] in pushStops.stopAll() }
        if let push = try PushWiring.make(config, loop: loop, logger: logger) {
            push.stopped(by: pushStops)
            loop.execute(with: hub) { $0.pushes.enable(dispatcher: push.service, settings: push.core) }
            self.push = push
        }
        if let settings = config.clawline {
            let key = try storage.clawlineSigningKey(dataDirectory: dataDirectory)
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
            try storage.shareGatewayIdentity(dataDirectory: dataDirectory)
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
            storage: storage,
            loop: loop,
            clock: SystemClock(),
            hub: hub
        )
        // The core starts with the stored devices, so bearer tokens work from the first request.
        hub.devices.preload(try storage.storedDevices())
        let hint = OperatorHint(dataDirectory: config.dataDirectory)
        hub.devices.pairing.operatorCommand = { hint.command($0) }
        ports = try loop.start()
        components.started("service loop") { [loop, logger] in
            // Turns still running end first, so their askers get an error frame before the 1001 close.
            let stopped = DispatchSemaphore(value: 0)
            loop.execute(with: hub) { hub in
                hub.stop(reason: "the relay is stopping") { ended in
                    if ended > 0 { logger.notice("turns cut by the stop", metadata: ["count": "\(ended)"]) }
                    stopped.signal()
                }
            }
            if stopped.wait(timeout: .now() + 2) == .timedOut { logger.warning("the core did not finish its turns within 2 s of the stop") }
            loop.stop(graceMillis: 2_000)
        }
        loop.execute(with: hub) { $0.start() }
        let upstreams = UpstreamLinks(
            node: storage.cluster?.node,
            ready: { [storage] in storage.accountFilesReady($0) },
            rebuild: { [unowned self] in rebuiltAccount($0) }
        )
        self.upstreams = upstreams
        let accounts = config.backends.filter(\.isUpstream).map(\.name)
        if storage.cluster != nil {
            // Until the first heartbeat names the holders, no account's turns run here.
            loop.execute(with: hub) { $0.accountLeases(accounts.map { AccountLease(account: $0, holder: nil) }) }
            storage.holdAccounts(accounts)
        }
        storage.joinCluster(
            hub: hub,
            loop: loop,
            leases: { leases in
                hub.accountLeases(leases)
                upstreams.held(leases)
            },
            fenced: Self.exitFenced(logger)
        )
        if let clawline { loop.execute(with: clawline) { $0.start() } }
        if let gateway { loop.execute(with: gateway) { $0.start() } }
        if let companion {
            loop.execute(with: companion) { companion in
                companion.start()
                companion.cutOff(failed)
            }
        }
        if let discoClaw { loop.execute(with: discoClaw) { $0.start() } }
        let links = built.connects
        loop.execute(with: upstreams) { $0.add(links) }
        self.desk = desk
        loop.execute(with: desk) { $0.start() }
        try writeListenersFile()
        try ServedConfig.record(config)
        if let settings = config.gateway, settings.mdns, let port = ports["gateway"] {
            advertise(settings, port: port, fingerprint: fingerprint, bots: backends.count)
        }
    }

    /// A cluster node the others declared dead must not act again (its turns were failed or taken
    /// over): it exits at once with status 75 (EX_TEMPFAIL), for its supervisor to start it again
    /// as a new incarnation. What it acknowledged is in PostgreSQL already.
    static func exitFenced(_ logger: Logger) -> @Sendable (String) -> Void {
        { reason in
            logger.critical("cluster: this node must stop: \(reason); exiting (status 75) to start again as a new node incarnation")
            exit(75)
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
            components.started("mDNS") { advertiser.stop() }
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

    /// Stops every part in the reverse order of their start, each within a bound: mDNS, the loop
    /// (running turns end, every socket closes with 1001), the HTTP clients, the audit and the
    /// store (each commits what it holds).
    public func stop() { components.stopAll() }

    /// Where upstream accounts report their link's state (loop thread).
    var reportAccountState: (String, String, LinkState, String) -> Void {
        { [unowned self] name, kind, state, detail in
            hub?.accounts.report(name, kind: kind, state, detail)
            if state == .connected { storage?.accountLinkConnected(name) }
        }
    }

    /// The one HTTP client every DiscoClaw account shares (its own thread), made on first use.
    func upstreamClient() -> HTTPClient {
        if let upstreamHTTP { return upstreamHTTP }
        let client = HTTPClient(maxOutstanding: 1_000, name: "upstream", logger: logger)
        components.started("upstream HTTP client") { client.shutdown() }
        upstreamHTTP = client
        return client
    }
}
