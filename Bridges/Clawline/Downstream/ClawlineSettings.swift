import ClawlineWire
import RelayCore

/// The `[clawline]` section, already validated.
public struct ClawlineSettings: Sendable, Equatable {
    public var host = "127.0.0.1"
    public var port = 18800
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    public var pendingTTLSeconds = 300
    public var maxPendingRequests = 100
    public var tokenTTLSeconds = 31_536_000
    public var maxReplayMessages = 500
    public var maxQueuedMessages = 20
    public var streamInactivitySeconds = 300
    public var messagesPerSecond = 5
    public var typingPerSecond = 2
    public var pairRequestsPerMinute = 5
    public var authAttemptsPerMinute = 5
    public var typingTimeoutSeconds = 10
    public var pingIntervalSeconds = 30
    public var pongTimeoutSeconds = 90
    public var maxUploadBytes = 104_857_600
    /// Largest WebSocket message accepted (the protocol's 320 KB message plus base64 and JSON overhead).
    public var maxFrameBytes = 1_048_576
    /// Name of the `[[backends]]` entry serving Clawline users; nil = the first backend.
    public var backend: String?
    /// The `[[backends]]` entry answering the admin channel (one conversation shared by every
    /// admin device); nil = `backend`.
    public var adminBackend: String?
    /// Clawline v1 cancels a device's stream when its socket closes (and drops its queue); false
    /// lets the answer complete, be stored and replayed.
    public var cancelOnDisconnect = true

    /// How the core runs this protocol's turns.
    public var turnPolicy: TurnPolicy {
        TurnPolicy(maxQueuedPerDevice: maxQueuedMessages, inactivityMillis: streamInactivitySeconds * 1000, backend: backend)
    }

    /// How the core runs the admin channel's turns: answered by `adminBackend`, else `backend`.
    var adminTurnPolicy: TurnPolicy {
        var policy = turnPolicy
        policy.backend = adminBackend ?? backend
        return policy
    }

    /// The policy of Clawline's own conversations (the timeline, the admin channel); nil for the others.
    public func turnPolicy(for conversation: Conversation) -> TurnPolicy? {
        if conversation.keys.contains(ClawlineChannel.adminKey) && conversation.userID == ClawlineChannel.adminAudience { return adminTurnPolicy }
        return conversation.keys.contains(.main) ? turnPolicy : nil
    }

    public init() {}
}
