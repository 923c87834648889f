internal import CLibWebSockets
import Foundation
import Logging
import RelayKit
import Synchronization

public struct TransportError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
}

/// The libwebsockets context and its one service thread.
///
/// `@unchecked Sendable` holds because all mutable state below is touched only on the service
/// thread; other threads reach it through `execute` (a locked mailbox + `lws_cancel_service`).
public final class ServiceLoop: LoopScheduler, @unchecked Sendable {
    struct ListenerEntry {
        let config: ListenerConfig
        let handler: ListenerHandler
        var vhost: OpaquePointer?
        var boundPort: Int = 0
    }

    let logger: Logger
    /// The loop that runs the service thread. `poll` unless asked: the relay asks for its
    /// `[server] event_loop`; the terminal client and the bench's generator hold few sockets.
    public let eventLoop: EventLoopKind
    private let mailbox = Mailbox()
    private let threadID = Atomic<UInt>(0)
    private let contextPointer = Atomic<UInt>(0)
    private let started = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private var startError: String?

    var listeners: [String: ListenerEntry] = [:]
    private var listenerOrder: [String] = []
    var webSockets: [OpaquePointer: WebSocketConnection] = [:]
    var exchanges: [OpaquePointer: HTTPExchange] = [:]
    var connectionIDs: [OpaquePointer: UInt64] = [:]
    /// Server connections that may still send request headers, with their remote address.
    var acceptedPeers: [OpaquePointer: String] = [:]
    /// What a connection lws handed over raw is answered (see `ServiceLoop+Refusals`).
    var rawAnswers: [OpaquePointer: String] = [:]
    var nextConnectionID: UInt64 = 1
    private var timers = TimerQueue()
    /// True while `drainMailbox` runs jobs (loop thread only).
    private var isDraining = false
    private var timerStorage: UnsafeMutablePointer<relay_timer_t>
    /// The epoll loop and the relay's timer on it, when `eventLoop` is `.epoll` (loop thread).
    private var epoll: EpollDriver?
    private var protocolStorage: UnsafeMutablePointer<lws_protocols>
    private var cStrings: [UnsafeMutablePointer<CChar>] = []
    var pendingClients: [UInt64: PendingClient] = [:]
    private var clientTokenCounter: UInt64 = 0
    var clientVhost: OpaquePointer?
    var isStopping = false
    private var shouldExit = false
    private var retained: Unmanaged<ServiceLoop>?
    var scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    /// Every frame in and out goes here when set.
    public var frameObserver: FrameObserver?

    /// Open WebSockets by listener (client sockets under `client`), counted where they open and
    /// close. Loop thread.
    public var openWebSockets: [String: Int] {
        var counts: [String: Int] = [:]
        for connection in webSockets.values { counts[connection.listener, default: 0] += 1 }
        return counts
    }

    public init(logger: Logger, eventLoop: EventLoopKind = .poll) {
        self.logger = logger
        self.eventLoop = eventLoop
        timerStorage = .allocate(capacity: 1)
        timerStorage.initialize(to: relay_timer_t())
        protocolStorage = .allocate(capacity: 2)
        protocolStorage.initialize(repeating: lws_protocols(), count: 2)
    }

    deinit {
        timerStorage.deallocate()
        protocolStorage.deallocate()
        for pointer in cStrings { free(pointer) }
        scratch.deallocate()
    }

    /// Registers a listener; call before `start`.
    public func addListener(_ config: ListenerConfig, handler: ListenerHandler) {
        listeners[config.name] = ListenerEntry(config: config, handler: handler)
        listenerOrder.append(config.name)
    }

    /// Creates the context and the vhosts on a new thread and returns the bound ports by listener name.
    public func start() throws -> [String: Int] {
        retained = Unmanaged.passRetained(self)
        let thread = Thread { [self] in
            Thread.nameCurrent("lws-service")
            self.run()
        }
        thread.name = "lws-service"
        thread.stackSize = 4 << 20
        thread.start()
        started.wait()
        if let startError {
            finished.wait()
            retained?.release()
            retained = nil
            throw TransportError(message: startError)
        }
        return listeners.mapValues { $0.boundPort }
    }

    public var isOnLoop: Bool { threadID.load(ordering: .acquiring) == UInt(bitPattern: Int(bitPattern: pthread_self())) }

    public func execute(_ job: @escaping @Sendable () -> Void) {
        // A job posted by a job the drain is running needs no wake-up: the drain takes it next.
        if mailbox.post(job), !(isOnLoop && isDraining) { wake() }
    }

    private func wake() {
        let raw = contextPointer.load(ordering: .acquiring)
        if raw != 0, let context = OpaquePointer(bitPattern: raw) { lws_cancel_service(context) }
    }

    /// Runs `job` after `delay` on the loop (saturating: a delay past the clock's range means
    /// "never"). Loop thread only.
    @discardableResult
    public func schedule(afterMillis delay: Int, _ job: @escaping () -> Void) -> TimerID {
        precondition(isOnLoop)
        let (micros, overflow) = UInt64(clamping: delay).multipliedReportingOverflow(by: 1_000)
        let (sum, past) = monotonicMicros().addingReportingOverflow(micros)
        let deadline = overflow || past ? UInt64.max : sum
        let before = timers.earliest
        let id = timers.add(deadline: deadline, job: job)
        if before == nil || deadline < before! { armTimer() }
        return id
    }

    public func cancel(_ timer: TimerID) {
        precondition(isOnLoop)
        timers.cancel(timer)
    }

    /// Closes every WebSocket with 1001 and stops the loop once they are gone or `graceMillis` passed.
    /// Returns when the context is destroyed. Any thread but the loop's.
    public func stop(graceMillis: Int = 2_000) {
        execute { [self] in
            self.beginStop(graceMillis: graceMillis)
        }
        finished.wait()
        retained?.release()
        retained = nil
    }

    private func beginStop(graceMillis: Int) {
        guard !isStopping else { return }
        isStopping = true
        for name in listenerOrder { listeners[name]?.handler.serviceWillStop() }
        for connection in webSockets.values { connection.close(code: 1001, reason: "server shutting down") }
        schedule(afterMillis: graceMillis) { [self] in self.requestExit() }
        checkDrained()
    }

    func checkDrained() {
        if isStopping, webSockets.isEmpty { requestExit() }
    }

    private func requestExit() {
        shouldExit = true
        wake()
    }

    // MARK: - The service thread

    private func run() {
        threadID.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .releasing)
        LibraryLog.current = LibraryLog(logger: logger)
        lws_set_log_level(Int32(LLL_ERR), libraryLogEmit)
        if eventLoop == .epoll {
            epoll = EpollDriver { [unowned self] in self.timersFired() }
            if epoll == nil { startError = "libev could not create an epoll loop" }
        }
        guard startError == nil, let context = createContext() else {
            epoll = nil
            started.signal()
            finished.signal()
            return
        }
        contextPointer.store(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(context))), ordering: .releasing)
        // The timers scheduled while the context was being made (keepalives) could not be armed yet.
        armTimer()
        started.signal()
        if let epoll {
            epoll.context = context
            while !shouldExit { epoll.runOnce() }
        } else {
            while !shouldExit {
                if lws_service(context, 0) < 0 { break }
            }
        }
        contextPointer.store(0, ordering: .releasing)
        relay_timer_cancel(context, timerStorage)
        lws_context_destroy(context)
        // After the context: destroying it stops the watchers lws has on the loop.
        epoll = nil
        webSockets.removeAll()
        exchanges.removeAll()
        finished.signal()
    }

    private func cString(_ string: String) -> UnsafePointer<CChar> {
        let pointer = strdup(string)!
        cStrings.append(pointer)
        return UnsafePointer(pointer)
    }

    private func createContext() -> OpaquePointer? {
        protocolStorage[0].name = cString("clawrelay")
        protocolStorage[0].callback = relayServiceCallback
        protocolStorage[0].per_session_data_size = 0
        // Each socket holds a receive buffer of this size (lws delivers a longer message in pieces
        // of it, which the loop joins), so it is small: it is most of an idle socket's memory.
        protocolStorage[0].rx_buffer_size = 1_024
        // One send() may take a whole gathered write (lws otherwise cuts sends to rx_buffer_size).
        protocolStorage[0].tx_packet_size = ServiceLoop.gatherBytes + 16
        var info = lws_context_creation_info()
        info.port = CONTEXT_PORT_NO_LISTEN
        // lws 4.1 checks UTF-8 (and closes with 1007) only when the context has the option; the
        // vhost's copy of it is ignored.
        info.options =
            UInt64(LWS_SERVER_OPTION_EXPLICIT_VHOSTS) | UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT) | UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.protocols = UnsafePointer(protocolStorage)
        if let epoll {
            info.options |= UInt64(LWS_SERVER_OPTION_LIBEV)
            info.foreign_loops = epoll.foreignLoops
        }
        guard let context = lws_create_context(&info) else {
            startError =
                epoll == nil
                ? "libwebsockets could not create its context"
                : "libwebsockets could not create its context on the epoll loop (is libwebsockets-evlib-ev installed?)"
            return nil
        }
        timerStorage.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        var clientInfo = lws_context_creation_info()
        clientInfo.port = CONTEXT_PORT_NO_LISTEN
        clientInfo.vhost_name = cString(Self.clientVhostName)
        clientInfo.protocols = UnsafePointer(protocolStorage)
        clientInfo.options = UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT) | UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8)
        clientVhost = lws_create_vhost(context, &clientInfo)
        for name in listenerOrder {
            guard var entry = listeners[name] else { continue }
            let place = "\(entry.config.host):\(entry.config.port) for [\(name)]"
            let address: String
            switch ListenAddress.resolve(host: entry.config.host, port: entry.config.port) {
            case .failure(let error):
                startError = "cannot listen on \(place): \(error.message)"
                lws_context_destroy(context)
                return nil
            case .success(let numeric):
                address = numeric
            }
            var vinfo = lws_context_creation_info()
            vinfo.port = Int32(entry.config.port)
            vinfo.iface = cString(address)
            vinfo.vhost_name = cString(entry.config.name)
            vinfo.protocols = UnsafePointer(protocolStorage)
            vinfo.alpn = cString("http/1.1")
            vinfo.options = UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8) | UInt64(LWS_SERVER_OPTION_DISABLE_IPV6)
            if address.contains(":") { vinfo.options &= ~UInt64(LWS_SERVER_OPTION_DISABLE_IPV6) }
            if let cert = entry.config.tlsCertificatePath, let key = entry.config.tlsKeyPath {
                vinfo.ssl_cert_filepath = cString(cert)
                vinfo.ssl_private_key_filepath = cString(key)
                vinfo.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            } else {
                // A request line that is not HTTP (a TLS hello, garbage) goes raw: a plain 400.
                vinfo.options |= UInt64(LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG)
            }
            let tls =
                entry.config.tlsCertificatePath.map { cert in
                    " (is the TLS certificate \(cert) or key \(entry.config.tlsKeyPath ?? "") unreadable, not PEM, or swapped?)"
                } ?? ""
            guard let vhost = lws_create_vhost(context, &vinfo) else {
                startError = "cannot listen on \(place)" + (tls.isEmpty ? ": libwebsockets refused the address" : tls)
                lws_context_destroy(context)
                return nil
            }
            entry.vhost = vhost
            entry.boundPort = Int(lws_get_vhost_listen_port(vhost))
            guard entry.boundPort > 0 else {
                startError = "cannot listen on \(place): libwebsockets did not open the socket\(tls)"
                lws_context_destroy(context)
                return nil
            }
            listeners[name] = entry
            if entry.config.pingIntervalMillis > 0 { scheduleKeepalive(listener: name, every: entry.config.pingIntervalMillis) }
        }
        return context
    }

    var currentContext: OpaquePointer? {
        let raw = contextPointer.load(ordering: .acquiring)
        return raw == 0 ? nil : OpaquePointer(bitPattern: raw)
    }

    func nextClientToken() -> UInt64 {
        clientTokenCounter += 1
        return clientTokenCounter
    }

    // MARK: - Timers

    private func armTimer() {
        let raw = contextPointer.load(ordering: .acquiring)
        if let epoll {
            if raw != 0 { epoll.arm(afterMicros: EpollDriver.delay(untilEarliest: timers.earliest, now: monotonicMicros())) }
            return
        }
        guard let earliest = timers.earliest, raw != 0, let context = OpaquePointer(bitPattern: raw) else { return }
        let now = monotonicMicros()
        // At most an hour ahead: a far deadline is re-armed when that fires (lws_usec_t is signed).
        let delay = earliest > now ? min(earliest - now, 3_600_000_000) : 1
        relay_timer_schedule(context, timerStorage, relayTimerFired, lws_usec_t(delay))
    }

    func timersFired() {
        let due = timers.popDue(now: monotonicMicros())
        for job in due { job() }
        armTimer()
    }

    /// Runs the posted jobs, and the jobs they post, up to `maxDrainRounds` rounds; what is left
    /// then waits for the next wake-up, so a job that keeps posting cannot starve the sockets.
    func drainMailbox() {
        isDraining = true
        var rounds = 0
        while rounds < Self.maxDrainRounds {
            let jobs = mailbox.drain()
            if jobs.isEmpty { break }
            for job in jobs { job() }
            rounds += 1
        }
        isDraining = false
        if rounds == Self.maxDrainRounds { wake() }
        if timers.earliest != nil { armTimer() }
    }

    static let maxDrainRounds = 16

    private func scheduleKeepalive(listener: String, every interval: Int) {
        schedule(afterMillis: interval) { [self] in
            self.sweepKeepalive(listener: listener)
            self.scheduleKeepalive(listener: listener, every: interval)
        }
    }

    private func sweepKeepalive(listener: String) {
        guard let config = listeners[listener]?.config else { return }
        let now = monotonicMicros()
        let timeout = UInt64(config.pongTimeoutMillis) * 1_000
        for connection in webSockets.values where connection.listener == listener && !connection.isClosing {
            if now - connection.lastPongMicros >= timeout {
                logger.info("closing socket without pong", metadata: ["conn": "\(connection.id)"])
                // A peer that answers no ping takes nothing queued either: its close goes first.
                connection.abandon(code: 1001, reason: "ping timeout")
            } else {
                connection.sendPing()
            }
        }
    }

    func newConnectionID(for wsi: OpaquePointer) -> UInt64 {
        if let id = connectionIDs[wsi] { return id }
        let id = nextConnectionID
        nextConnectionID += 1
        connectionIDs[wsi] = id
        return id
    }
}

private func relayTimerFired(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul, let owner = relay_timer_owner(sul) else { return }
    Unmanaged<ServiceLoop>.fromOpaque(owner).takeUnretainedValue().timersFired()
}
