import RelayCore

/// The `[discoclaw]` section, already validated.
public struct DiscoClawSettings: Sendable, Equatable {
    public var host = "127.0.0.1"
    public var port = 4242
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    /// What `POST /auth/register` must present; nil = registration disabled (403).
    public var setupToken: String?
    /// When set, every registration joins this relay user (e.g. a Clawline userId, so the apps
    /// share history); nil = each registration creates a user.
    public var userID: String?
    /// The `[[backends]]` entry for conversations that name none; nil = the first backend.
    public var backend: String?
    /// Largest request body accepted (a message with a pasted file is large).
    public var maxBodyBytes = 1_048_576
    /// Devices one user may have at most.
    public var maxDevicesPerUser = 50
    /// Registrations (and device additions) per minute over the whole listener.
    public var registrationsPerMinute = 10
    /// Seconds between WebSocket pings (the app answers pings, it never sends them).
    public var pingIntervalSeconds = 30
    /// A turn with no output for this long fails.
    public var turnInactivitySeconds = 600
    /// Turns one device may have waiting behind a conversation's running one.
    public var maxQueuedTurns = 20

    public init() {}

    public var turnPolicy: TurnPolicy {
        TurnPolicy(maxQueuedPerDevice: maxQueuedTurns, inactivityMillis: turnInactivitySeconds * 1000, backend: backend)
    }

    /// `turnPolicy` for a conversation a DiscoClaw client created; nil for the others.
    public func turnPolicy(for conversation: Conversation) -> TurnPolicy? {
        conversation.key(in: DiscoClawKeys.conversation) == nil ? nil : turnPolicy
    }
}

/// The conversation key scheme of conversations DiscoClaw clients created.
public enum DiscoClawKeys {
    public static let conversation = "discoclaw"
}
