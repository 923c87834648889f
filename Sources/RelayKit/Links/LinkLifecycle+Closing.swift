extension LinkLifecycle {
    /// Why the open socket is closing, when this side closed it.
    public var closing: LinkClosing? { socket?.closing }

    /// This side closes the open socket; `closing` is how the close will be reported.
    public mutating func close<Own>(_ closing: LinkClosing, code: UInt16 = 4000, reason: String = "") -> [LinkAction<Own>] {
        guard isOpen else { return [] }
        modifySocket { $0.closing = closing }
        return [.close(code: code, reason: reason)]
    }

    /// The socket closed or never opened: the try ends as this side's `close` said, else as
    /// `peerClosed` reads it.
    public mutating func closed<Own>(code: UInt16?, error: String?) -> [LinkAction<Own>] {
        retry(closing ?? peerClosed(code: code, error: error))
    }

    /// How a close this side did not ask for reads: libwebsockets' error, else the peer's code.
    public func peerClosed(code: UInt16?, error: String?) -> LinkClosing {
        LinkClosing(error ?? code.map { "\(endpoint) closed the connection (\($0))" } ?? "\(endpoint) closed the connection")
    }

    /// Ends the try (connecting or open) and waits: the closing's own delay, else the backoff's
    /// next (±jitter), with a report that ends `; next try in 1.6 s` unless the closing has none.
    public mutating func retry<Own>(_ closing: LinkClosing) -> [LinkAction<Own>] {
        guard phase == .connecting || isOpen else { return [] }
        phase = .waitingToRetry
        if closing.saturatesBackoff { backoff.saturate() }
        let delay = closing.retryAfterMillis ?? backoff.next(random: random)
        let reported: [LinkAction<Own>] = closing.reason.map { report(closing.state, "\($0); next try in \(Backoff.seconds(delay))") } ?? []
        return [.cancelTick] + reported + [.armRetry(afterMillis: delay)]
    }

    /// No more tries until the relay restarts: a refusal reported as `failed` with `detail`, or
    /// (nil) the owner letting the link go, which reports nothing.
    public mutating func stop<Own>(_ detail: String?) -> [LinkAction<Own>] {
        guard phase != .stopped else { return [] }
        let wasOpen = isOpen
        phase = .stopped
        let reported: [LinkAction<Own>] = detail.map { report(.failed, $0) } ?? []
        return [.cancelTick] + reported + (wasOpen ? [.close(code: 1000, reason: "")] : [])
    }

    /// Every tick while a socket is open: close it when its handshake is late or it went silent,
    /// else ping and arm the next tick. `silentMillis` is the connection's pong age; frames count
    /// as heard too.
    public mutating func tick<Own>(now: Int64, silentMillis: Int) -> [LinkAction<Own>] {
        guard var socket, socket.closing == nil else { return [] }
        if let awaiting = socket.awaiting, now - socket.openedAt >= Int64(timing.handshakeTimeoutMillis) {
            let reason = "\(endpoint) sent no \(awaiting) within \(Backoff.seconds(timing.handshakeTimeoutMillis))"
            return close(LinkClosing(reason), reason: timing.handshakeCloseReason)
        }
        let silent: Bool
        let window: Int
        switch socket.watchdog {
        case .silence(let millis):
            silent = min(silentMillis, Int(clamping: now - socket.lastHeardAt)) >= millis
            window = millis
        case .silentTicks(let limit):
            socket.silentTicks = socket.heardSinceTick ? 0 : socket.silentTicks + 1
            socket.heardSinceTick = false
            silent = socket.silentTicks >= limit
            window = limit * socket.tickMillis
        }
        phase = .open(socket)
        guard !silent else {
            return close(LinkClosing("\(endpoint) answered no ping within \(Backoff.seconds(window))"), reason: timing.silenceCloseReason)
        }
        return [.ping, .armTick(afterMillis: socket.tickMillis)]
    }
}
