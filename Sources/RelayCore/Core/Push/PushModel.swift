import Foundation

/// Where a device can be woken: an APNs device token or an ntfy topic URL.
public struct PushTarget: Sendable, Equatable, Hashable, Codable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case apns
        case ntfy
    }

    public var deviceID: String
    public var kind: Kind
    /// The APNs token in lower-case hex, or the ntfy topic URL. A secret: never logged or audited.
    public var token: String
    /// When it was (last) registered; an APNs `Unregistered` older than this leaves it alone.
    public var registeredAt: Int64

    public init(deviceID: String, kind: Kind, token: String, registeredAt: Int64) {
        self.deviceID = deviceID
        self.kind = kind
        self.token = token
        self.registeredAt = registeredAt
    }

    /// An APNs device token as apps send it: 32 to 256 bytes of hex (64 characters today).
    public static func isAPNsToken(_ text: String) -> Bool {
        (32...256).contains(text.utf8.count)
            && text.utf8.allSatisfy { (48...57).contains($0) || (65...70).contains($0) || (97...102).contains($0) }
    }

    /// What logs, the audit and `clawrelay devices list` show: the kind and the token's last 4
    /// characters (`apns:…9f3a`); an ntfy URL its host and port only (never credentials or the
    /// topic, which is as good as a password), a bare topic its last 4 characters.
    public var redacted: String {
        switch kind {
        case .apns: return "apns:…" + String(token.suffix(4))
        case .ntfy: return "ntfy:" + (Self.origin(of: token).map { $0 + "/…" } ?? "…" + String(token.suffix(4)))
        }
    }

    /// `host[:port]` of an http(s) URL, without any user or password; nil for anything else.
    public static func origin(of url: String) -> String? {
        guard let components = URLComponents(string: url), ["http", "https"].contains(components.scheme?.lowercased() ?? ""),
            let host = components.host, !host.isEmpty
        else { return nil }
        return components.port.map { "\(host):\($0)" } ?? host
    }
}

/// A device that has push targets, and whose it is.
public struct PushDevice: Sendable, Equatable {
    public var deviceID: String
    public var userID: String
    /// The protocol the device speaks: picks the payload's form.
    public var protocolName: String
    public var targets: [PushTarget]

    public init(deviceID: String, userID: String, protocolName: String, targets: [PushTarget]) {
        self.deviceID = deviceID
        self.userID = userID
        self.protocolName = protocolName
        self.targets = targets
    }
}

/// A push waiting for its time: the newest of the events coalesced for one device and
/// conversation. Durable, so a restart delivers it (once).
public struct PendingPush: Sendable, Equatable, Codable {
    /// What a push is about.
    public enum Kind: String, Sendable, Equatable, Codable {
        /// Answers and failures (durable, coalesced per conversation).
        case answer
        /// An approval waits for the user (live only: approvals do not outlive the relay).
        case approvalRequested
        /// An approval the device was pushed was resolved: a silent push clears it.
        case approvalResolved
    }

    /// A UUID: the row's key and the APNs `apns-id`.
    public var id: String
    public var deviceID: String
    public var userID: String
    public var conversationID: String
    /// How many events it stands for.
    public var count: Int
    /// The newest coalesced event's seq (0 for a failure, which has none): a read cursor at or
    /// past it cancels the push.
    public var lastSeq: Int64
    /// True when the newest event is a failed turn.
    public var failed: Bool
    /// The newest answer (or failure reason), at most `textLimit` characters.
    public var text: String
    /// How long the newest turn ran, for payloads that tell long runs apart.
    public var runMillis: Int64
    public var createdAt: Int64
    public var dueAt: Int64
    public var kind: Kind = .answer
    /// The approval an approval push is about.
    public var approval: Approval?

    public static let textLimit = 1_000

    public init(
        id: String,
        deviceID: String,
        userID: String,
        conversationID: String,
        count: Int,
        lastSeq: Int64,
        failed: Bool,
        text: String,
        runMillis: Int64,
        createdAt: Int64,
        dueAt: Int64
    ) {
        self.id = id
        self.deviceID = deviceID
        self.userID = userID
        self.conversationID = conversationID
        self.count = count
        self.lastSeq = lastSeq
        self.failed = failed
        self.text = text
        self.runMillis = runMillis
        self.createdAt = createdAt
        self.dueAt = dueAt
    }

    /// `turn.final`, `turn.failed`, `approval.requested` or `approval.resolved`: the webhook's `event`.
    public var eventName: String {
        switch kind {
        case .answer: failed ? "turn.failed" : "turn.final"
        case .approvalRequested: "approval.requested"
        case .approvalResolved: "approval.resolved"
        }
    }
}

/// What a push says, whatever carries it.
public struct PushContent: Sendable, Equatable {
    public var title: String
    public var body: String
    /// Groups notifications on the device (APNs `thread-id`).
    public var threadID: String
    /// Extra fields at the root of an APNs payload (a protocol's own keys).
    public var custom: [String: JSONValue]
    /// Where a tap leads, when the protocol has deep links (ntfy's `Click`).
    public var link: String?
    /// The APNs `category` (the app's actions for it).
    public var category: String?
    /// No alert: APNs gets a background push with only `custom` (an approval resolved); ntfy nothing.
    public var silent: Bool
    /// An alert that also wakes the app (APNs `content-available`), so it can fetch what waits.
    public var wakesApp = false
    /// The alert's second line (APNs `subtitle`).
    public var subtitle: String?
    /// A later push of the same conversation may replace this one on the device (APNs
    /// `apns-collapse-id`). Off for pushes that each carry an answer the app must process.
    public var collapses = true

    public init(
        title: String,
        body: String,
        threadID: String,
        custom: [String: JSONValue] = [:],
        link: String? = nil,
        category: String? = nil,
        silent: Bool = false
    ) {
        self.title = title
        self.body = body
        self.threadID = threadID
        self.custom = custom
        self.link = link
        self.category = category
        self.silent = silent
    }
}

/// What a protocol's payload is made from.
public struct PushNotice: Sendable {
    public var push: PendingPush
    public var device: PushDevice
    /// The conversation, when it could be loaded.
    public var conversation: Conversation?
    /// The backend that answers it (the router's default when the conversation names none).
    public var backendName: String

    public init(push: PendingPush, device: PushDevice, conversation: Conversation?, backendName: String) {
        self.push = push
        self.device = device
        self.conversation = conversation
        self.backendName = backendName
    }
}

/// One push handed to the sinks.
public struct PushDelivery: Sendable {
    public var push: PendingPush
    public var device: PushDevice
    public var content: PushContent

    public init(push: PendingPush, device: PushDevice, content: PushContent) {
        self.push = push
        self.device = device
        self.content = content
    }
}

/// One try of one sink, as `clawrelay audit --protocol push` shows it.
public struct PushAttempt: Sendable, Equatable {
    public enum Outcome: String, Sendable, Codable {
        /// Accepted by the service.
        case sent
        /// Refused or unreachable; tried again.
        case retrying
        /// Refused or unreachable, given up.
        case failed
        /// The service said the target is dead; it was retired.
        case retired
        /// Not tried: the sink is unhealthy (a configuration error) or disabled.
        case skipped
    }

    public var timeMillis: Int64
    public var deviceID: String
    public var conversationID: String
    /// `apns`, `ntfy`, or `webhook:<host>`.
    public var sink: String
    /// The redacted target.
    public var target: String
    /// The HTTP status, 0 when there was no answer.
    public var status: Int
    public var outcome: Outcome
    /// The service's reason or the transport error; never a secret.
    public var reason: String

    public init(
        timeMillis: Int64,
        deviceID: String,
        conversationID: String,
        sink: String,
        target: String,
        status: Int,
        outcome: Outcome,
        reason: String
    ) {
        self.timeMillis = timeMillis
        self.deviceID = deviceID
        self.conversationID = conversationID
        self.sink = sink
        self.target = target
        self.status = status
        self.outcome = outcome
        self.reason = reason
    }
}

/// How one delivery went: every attempt, and the targets the services declared dead.
public struct PushReport: Sendable {
    public var attempts: [PushAttempt]
    public var retired: [(target: PushTarget, reason: String)]

    public init(attempts: [PushAttempt] = [], retired: [(target: PushTarget, reason: String)] = []) {
        self.attempts = attempts
        self.retired = retired
    }
}

/// The sinks (APNs, ntfy, webhooks), running off the loop.
public protocol PushDispatcher: AnyObject {
    /// Sends `delivery` to each of its targets (and every webhook); `completion` runs on the loop
    /// once every sink finished, retries included.
    func dispatch(_ delivery: PushDelivery, completion: @escaping (PushReport) -> Void)
}

/// The durable side of pushes.
///
/// - Important: called on the loop; completions run on the loop after commit, in order.
public protocol PushJournal: AnyObject {
    /// Every device with a live (unretired) target, with its owner.
    func pushDevices(completion: @escaping (Result<[PushDevice], any Error>) -> Void)
    /// One device's live targets, nil when it has none (or is unknown).
    func pushDevice(_ deviceID: String, completion: @escaping (Result<PushDevice?, any Error>) -> Void)
    /// Stores (or replaces) a device's target of `kind`; a retired one comes back to life.
    func savePushTarget(
        deviceID: String,
        kind: PushTarget.Kind,
        token: String,
        platform: String?,
        at millis: Int64,
        completion: @escaping (Result<Void, any Error>) -> Void
    )
    /// Pushes not sent yet.
    func pendingPushes(completion: @escaping (Result<[PendingPush], any Error>) -> Void)
    func savePush(_ push: PendingPush)
    func deletePush(id: String)
    /// Retires a target unless it was registered again after `unless registeredAfter`.
    func retire(_ target: PushTarget, reason: String, at millis: Int64)
    func record(_ attempts: [PushAttempt], userID: String?)
}
