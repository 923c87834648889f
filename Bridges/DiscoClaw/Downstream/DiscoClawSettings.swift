import RelayCore

/// The `[discoclaw]` section, already validated.
public struct DiscoClawSettings: Sendable, Equatable {
    public var host = "127.0.0.1"
    public var port = 4242
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    /// What `POST /auth/register` must present to join the listener's user; nil (and no `users`) =
    /// registration disabled (403).
    public var setupToken: String?
    /// The user `setupToken` registrations join (e.g. a Clawline userId, so the apps share
    /// history); nil = the listener's one user, made by the first registration (as the real
    /// server, which is single-user, does).
    public var userID: String?
    /// Other people of the same relay: a registration with one of their setup tokens joins their
    /// user instead.
    public var users: [User] = []
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
    /// How long after its `POST` reply is written the sending device's sockets hold an answer's
    /// events: the app inserts the answer's row only after decoding the reply and two SQLite
    /// writes, and drops events about rows it lacks (`DiscoClawAnswerHolds`).
    public var answerHoldMillis = 250
    /// How long after its `POST` reply an answer that ended while held is announced again with
    /// `conversation.updated`, for an app slower than the hold (longer than the hold: the `/sync`
    /// it starts must not find the message before the app has renamed its own copy).
    public var answerAnnounceMillis = 2_000

    /// Another person: a setup token of their own and the user it joins (`[[discoclaw.users]]`).
    public struct User: Sendable, Equatable {
        public var setupToken: String
        public var userID: String

        public init(setupToken: String, userID: String) {
            self.setupToken = setupToken
            self.userID = userID
        }
    }

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
