import DiscoClawBridge
import LocalBridge

/// One `[[backends]]` entry: a built-in backend that answers turns.
public struct BackendSettings: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Answers `echo: <text>`, waiting `delayMillis` before each step.
        case echo(delayMillis: Int)
        /// Runs `command` per turn with the text on stdin and `environment` added; killed after
        /// `timeoutSeconds` without output, or `maxSeconds` in all.
        case command(command: [String], timeoutSeconds: Int, maxSeconds: Int? = nil, environment: [String: String] = [:])
        /// Runs Claude Code, one live process per conversation in use, resuming the
        /// conversation's session; in the conversation's directory, else `workingDirectory`.
        case claudeCode(ClaudeCodeSettings)
        /// An operator account on an OpenClaw gateway (another relay, or a real gateway).
        case openclaw(url: WebSocketURL, sessionKey: String?, allowSelfSigned: Bool, exposeNodes: Bool)
        /// A client of a Claude Companion server (a real one, or another relay's `[companion]`).
        case companion(url: WebSocketURL, token: String, workingDirectory: String?, allowSelfSigned: Bool)
        /// A client device of a Clawline provider (a real one, or another relay's `[clawline]`),
        /// paired under `deviceName`.
        case clawline(url: WebSocketURL, deviceName: String, allowSelfSigned: Bool)
        /// A client of a DiscoClaw server (a real one, or another relay's `[discoclaw]`); each
        /// conversation's title starts with `titlePrefix`.
        case discoclaw(url: HTTPURL, credential: DiscoClawCredential, allowSelfSigned: Bool, titlePrefix: String?)
    }

    public var name: String
    public var kind: Kind

    /// Every backend's kind by name: the model catalog the gateway's `models.list` shows.
    public static func kindsByName(_ backends: [BackendSettings]) -> [String: String] {
        Dictionary(backends.map { ($0.name, $0.kindName) }, uniquingKeysWith: { first, _ in first })
    }

    /// The kind as the config names it.
    public var kindName: String {
        switch kind {
        case .echo: "echo"
        case .command: "command"
        case .claudeCode: "claude-code"
        case .openclaw: "openclaw"
        case .companion: "companion"
        case .clawline: "clawline"
        case .discoclaw: "discoclaw"
        }
    }

    /// An account on an upstream server, with a link that has a state (`LinkState`); the other
    /// kinds run here and are always ready.
    public var isUpstream: Bool {
        switch kind {
        case .echo, .command, .claudeCode: false
        case .openclaw, .companion, .clawline, .discoclaw: true
        }
    }

    public init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }

    /// The backend used when a file has no `[[backends]]`: `echo`, answering at once.
    public static let defaultEcho = BackendSettings(name: "echo", kind: .echo(delayMillis: 0))
}

/// A `kind = "claude-code"` backend's keys: the backend's own options.
public typealias ClaudeCodeSettings = ClaudeCodeOptions

/// The `[audit]` section: every frame in and out, redacted, kept for a number of days.
public struct AuditSettings: Sendable, Equatable {
    public var enabled: Bool
    public var retentionDays: Int
    /// Audit the admin listener (`/healthz`, `/metrics`) too; off by default: a scraper would fill the log.
    public var admin: Bool

    public init(enabled: Bool = true, retentionDays: Int = 30, admin: Bool = false) {
        self.enabled = enabled
        self.retentionDays = retentionDays
        self.admin = admin
    }
}

/// `ws://host:port/path` or `wss://…`, split for the transport; a query is kept on the path.
public struct WebSocketURL: Sendable, Equatable {
    public var tls: Bool
    public var host: String
    public var port: Int
    public var path: String

    public init?(_ text: String) {
        let tls: Bool
        let rest: Substring
        if text.hasPrefix("ws://") {
            tls = false
            rest = text.dropFirst(5)
        } else if text.hasPrefix("wss://") {
            tls = true
            rest = text.dropFirst(6)
        } else {
            return nil
        }
        let hostPort = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(hostPort.count)
        guard let endpoint = ListenEndpoint(String(hostPort).contains(":") ? String(hostPort) : "\(hostPort):\(tls ? 443 : 80)") else { return nil }
        self.tls = tls
        host = endpoint.host
        port = endpoint.port
        self.path = path.isEmpty ? "/" : String(path)
    }
}
