import RelayCore

/// The `[gateway]` section, already validated.
public struct GatewaySettings: Sendable, Equatable {
    public var host = "127.0.0.1"
    public var port = 18789
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    public var tickIntervalMillis = 30_000
    public var handshakeTimeoutMillis = 15_000
    /// The highest gateway protocol offered (3 or 4); clients speaking only higher are refused.
    public var maxProtocol = 4
    public var pendingTTLSeconds = 300
    /// Pairing requests waiting at once (from one address: a tenth of it, at least one).
    public var maxPendingRequests = 100
    public var invokeTimeoutMillis = 30_000
    public var maxPayloadBytes = 25 * 1024 * 1024
    public var maxBufferedBytes = 50 * 1024 * 1024
    /// The relay user whose history gateway chat lands in (Clawline devices of that user see it).
    public var userID = "gateway"
    /// A shared operator token or password; a client presenting it is paired without a request.
    public var sharedToken: String?
    public var password: String?
    /// Pair devices connecting from loopback without a request.
    public var autoApproveLoopback = false
    /// Hold foreground-only invokes for a backgrounded node instead of refusing them.
    public var queueUntilForeground = false
    /// Advertise `_openclaw-gw._tcp` and `_openclaw._tcp` through Avahi.
    public var mdns = false
    /// The host name or address the advertisement tells clients to dial (default: the listen host).
    public var lanHost: String?
    /// The name `gateway.discover` reports.
    public var name = "clawrelay"
    /// Name of the `[[backends]]` entry for chat; nil = the first backend.
    public var backend: String?
    /// A Control UI build (the folder holding its `index.html`, e.g. an installed openclaw
    /// package's `dist/control-ui`) served at `/` to plain HTTP; nil: plain HTTP gets 426.
    public var controlUIDirectory: String?
    /// Every backend by name with its kind: the model catalog `models.list` shows.
    public var backendKinds: [String: String] = [:]
    /// Runs an operator may have waiting behind a session's running one.
    static let maxQueuedRunsPerDevice = 20

    public init() {}

    /// How the core runs a `chat.send` (its `timeoutMs` may shorten the inactivity).
    public var turnPolicy: TurnPolicy { TurnPolicy(maxQueuedPerDevice: Self.maxQueuedRunsPerDevice, backend: backend) }

    /// `turnPolicy` for a conversation a gateway session key names; nil for the others.
    public func turnPolicy(for conversation: Conversation) -> TurnPolicy? {
        conversation.key(in: ConversationKey.sessionScheme) == nil ? nil : turnPolicy
    }
}
