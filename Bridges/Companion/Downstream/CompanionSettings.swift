import RelayCore

/// The `[companion]` section, already validated.
public struct CompanionSettings: Sendable, Equatable {
    public var host = "127.0.0.1"
    public var port = 3001
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    /// The shared secret clients present (`?token=` or `Authorization: Bearer`); nil = the one
    /// generated into the data directory (`companion.token`).
    public var authToken: String?
    /// The relay user Companion clients act as (a Clawline userId makes both apps share history).
    public var userID = "companion"
    /// Name of the `[[backends]]` entry answering Companion sessions; nil = the first backend.
    public var backend: String?
    /// Live sessions at most (one per working directory).
    public var maxSessions = 10
    /// How long a device's queued events wait for it.
    public var queueTTLSeconds = 86_400
    /// Queued events kept per device at most (the oldest go first).
    public var maxQueuedEvents = 1_000
    /// Seconds between WebSocket pings; a socket that misses two is closed (1001).
    public var pingIntervalSeconds = 15
    /// The folder whose subfolders are the app's projects; nil = `<data_dir>/projects`.
    public var projectsRoot: String?
    /// A live session idle this long is closed (its conversation and history stay).
    public var idleSeconds = 1_800
    /// Idle time allowed to a session whose app went to the background.
    public var backgroundIdleSeconds = 14_400
    /// A command with no output for this long fails.
    public var streamInactivitySeconds = 1_800
    /// Commands one device may have waiting behind the running one, per session.
    public var maxQueuedCommands = 20
    /// Largest WebSocket message or request body accepted.
    public var maxFrameBytes = 1_048_576
    /// `[[companion.routes]]`: a new session whose working directory starts with a prefix is
    /// bound to that route's backend (the longest matching prefix wins).
    public var routes: [Route] = []

    /// One `[[companion.routes]]` entry.
    public struct Route: Sendable, Equatable {
        public var directoryPrefix: String
        public var backend: String

        public init(directoryPrefix: String, backend: String) {
            self.directoryPrefix = directoryPrefix
            self.backend = backend
        }
    }

    public init() {}

    /// The backend a new session in `directory` is bound to: the longest route whose prefix is
    /// the directory or one of its parents; nil = `backend`.
    public func backend(forDirectory directory: String) -> String? {
        routes.filter { route in
            let prefix = route.directoryPrefix.hasSuffix("/") ? String(route.directoryPrefix.dropLast()) : route.directoryPrefix
            return directory == prefix || directory.hasPrefix(prefix + "/") || prefix.isEmpty
        }.max { $0.directoryPrefix.count < $1.directoryPrefix.count }?.backend
    }

    /// How the core runs Companion turns.
    public var turnPolicy: TurnPolicy {
        TurnPolicy(maxQueuedPerDevice: maxQueuedCommands, inactivityMillis: streamInactivitySeconds * 1000, backend: backend)
    }

    /// `turnPolicy` for a Companion session's conversation; nil for the others. (A route binds a
    /// session to its backend when the session is made.)
    public func turnPolicy(for conversation: Conversation) -> TurnPolicy? {
        conversation.key(in: CompanionKeys.session) == nil && conversation.key(in: CompanionKeys.directory) == nil ? nil : turnPolicy
    }

    /// How Companion devices get what they missed: a queue of the Companion sessions' events.
    public var delivery: MissedDelivery {
        .queue(ttlMillis: Int64(queueTTLSeconds) * 1000, capacity: maxQueuedEvents, scheme: CompanionKeys.session)
    }
}

/// The conversation key schemes Companion uses.
public enum CompanionKeys {
    /// A Companion session id.
    public static let session = "companion"
    /// A session's working directory: one session per directory.
    public static let directory = "companion.dir"
}

extension CompanionSettings {
    /// Bytes a Companion token may contain: the app sends it in a URL query without escaping.
    public static let tokenAlphabet = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8))
}
