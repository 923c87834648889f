/// `[push]`: the sinks and when pushes go.
public struct PushSettings: Sendable, Equatable {
    public struct APNs: Sendable, Equatable {
        /// The `.p8` key file (PKCS #8 P-256), its key id and the team id.
        public var keyFile: String
        public var keyID: String
        public var teamID: String
        /// The app's bundle id (`apns-topic`).
        public var topic: String
        /// `https://api.push.apple.com` (production) or the sandbox host, or a test server.
        public var endpoint: String

        public static let production = "https://api.push.apple.com"
        public static let sandbox = "https://api.sandbox.push.apple.com"

        public init(keyFile: String, keyID: String, teamID: String, topic: String, endpoint: String = production) {
            self.keyFile = keyFile
            self.keyID = keyID
            self.teamID = teamID
            self.topic = topic
            self.endpoint = endpoint
        }
    }

    public struct Webhook: Sendable, Equatable {
        public var url: String
        /// Signs every body (HMAC-SHA256 of "timestamp.body").
        public var secret: String

        public init(url: String, secret: String) {
            self.url = url
            self.secret = secret
        }
    }

    public var apns: APNs?
    /// A CA bundle trusted besides the system's (for a test APNs server).
    public var caFile: String?
    /// The ntfy server a bare topic is taken relative to.
    public var ntfyURL = "https://ntfy.sh"
    /// Sent as `Authorization: Bearer` to targets on `ntfyURL`'s server only.
    public var ntfyToken: String?
    public var webhooks: [Webhook] = []
    public var delaySeconds = 0
    /// `HH:MM-HH:MM` in `timezone` (the system's when absent).
    public var quietHours: String?
    public var timezone: String?
    /// The first retry's delay; later ones double, each with ±50 % jitter.
    public var retryBaseMillis = 1_000
    /// A completion that ran longer than this is a long run.
    public var longRunSeconds = 300

    public init() {}
}
