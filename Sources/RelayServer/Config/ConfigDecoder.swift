import ClawlineBridge
import RelayTransport
import TOMLKit

/// Turns the parsed TOML tree into a `RelayConfig`, section by section.
struct ConfigDecoder {
    let root: ConfigTable

    private static let sections = [
        "server", "store", "cluster", "admin", "clawline", "gateway", "companion", "discoclaw", "audit", "push", "backends",
    ]

    func decode() throws(ConfigError) -> RelayConfig {
        try rejectUnknownSections()
        var config = RelayConfig(admin: nil, clawline: nil)
        if let server = try section("server") {
            try server.rejectUnknownKeys(["data_dir", "log_level", "log_format", "event_loop"])
            if let name = try server.string("event_loop") {
                guard let loop = EventLoopKind(rawValue: name) else {
                    let names = EventLoopKind.allCases.map(\.rawValue).joined(separator: " or ")
                    throw server.error(.invalidValue, key: "event_loop", "expected \(names), got \(quoted(name))")
                }
                config.eventLoop = loop
            }
            if let format = try server.string("log_format") {
                guard RelayConfig.logFormats.contains(format) else {
                    throw server.error(.invalidValue, key: "log_format", "expected text or json, got \(quoted(format))")
                }
                config.logFormat = format
            }
            if let directory = try server.string("data_dir") {
                guard !directory.isEmpty else { throw server.error(.invalidValue, key: "data_dir", "must not be empty") }
                config.dataDirectory = directory
            }
            if let level = try server.string("log_level") {
                guard RelayConfig.logLevels.contains(level) else {
                    throw server.error(
                        .invalidValue,
                        key: "log_level",
                        "expected one of \(RelayConfig.logLevels.joined(separator: ", ")), got \(quoted(level))"
                    )
                }
                config.logLevel = level
            }
        }
        if let store = try section("store") { config.store = try Self.store(store) }
        if let cluster = try section("cluster") { config.cluster = try Self.cluster(cluster, store: config.store) }
        if let admin = try section("admin") {
            try admin.rejectUnknownKeys(["listen", "allow_public"])
            config.admin = try admin.endpoint("listen", default: RelayConfig.defaultAdminEndpoint)
        }
        if let audit = try section("audit") {
            try audit.rejectUnknownKeys(["enabled", "retention_days", "admin"])
            config.audit.admin = try audit.bool("admin") ?? config.audit.admin
            config.audit.enabled = try audit.bool("enabled") ?? config.audit.enabled
            config.audit.retentionDays = try audit.integer("retention_days") ?? config.audit.retentionDays
        }
        config.backends = try backends() ?? [.defaultEcho]
        if let clawline = try section("clawline") {
            var settings = try Self.clawline(clawline, backends: config.backends)
            settings.maxUploadBytes = config.store.uploadLimit(settings.maxUploadBytes)
            config.clawline = settings
        }
        if let gateway = try section("gateway") {
            config.gateway = try Self.gateway(gateway, backends: config.backends)
        }
        if let companion = try section("companion") {
            config.companion = try Self.companion(companion, backends: config.backends)
        }
        if let discoClaw = try section("discoclaw") {
            config.discoClaw = try Self.discoClaw(discoClaw, backends: config.backends)
        }
        if let push = try section("push") { config.push = try Self.push(push) }
        try rejectSharedPorts(config)
        return config
    }

    /// Two listeners on one port: the second could never bind.
    private func rejectSharedPorts(_ config: RelayConfig) throws(ConfigError) {
        let listeners = config.listenAddresses
        let wildcards: Set<String> = ["0.0.0.0", "::", "*", ""]
        for (index, first) in listeners.enumerated() {
            for second in listeners[(index + 1)...] where first.2 != 0 && first.2 == second.2 {
                guard first.1 == second.1 || wildcards.contains(first.1) || wildcards.contains(second.1) else { continue }
                let table = ConfigTable(table: TOMLTable(), section: ConfigSection(name: second.0, occurrence: nil), source: root.source)
                throw table.error(.invalidValue, key: "listen", "port \(second.2) is also [\(first.0)]'s; every listener needs its own port")
            }
        }
    }

    private func rejectUnknownSections() throws(ConfigError) {
        let unknown = root.table.keys.filter { !Self.sections.contains($0) }
        let lines = unknown.map { root.source.locator.line(of: ConfigSection(name: $0, occurrence: nil)) ?? Int.max }
        guard let first = zip(unknown, lines).min(by: { $0.1 < $1.1 })?.0 else { return }
        let known = "server, store, cluster, admin, clawline, gateway, companion, discoclaw, audit, push, [[backends]]"
        throw root.source.error(.unknownSection, ConfigSection(name: first, occurrence: nil), "unknown section; expected one of: \(known)")
    }

    /// The `[name]` table, nil when absent.
    private func section(_ name: String) throws(ConfigError) -> ConfigTable? {
        guard let value = root.table[name] else { return nil }
        let section = ConfigSection(name: name, occurrence: nil)
        guard let table = value.table else {
            throw root.source.error(.wrongType, section, "expected a table, got \(ConfigTable.describe(value))")
        }
        return try ConfigTable(table: table, section: section, source: root.source).adoptingRenamedKeys()
    }

    /// Every `[[backends]]` entry, nil when there are none in the file.
    private func backends() throws(ConfigError) -> [BackendSettings]? {
        guard let value = root.table["backends"] else { return nil }
        let first = ConfigSection(name: "backends", occurrence: 0)
        guard let array = value.array else {
            throw root.source.error(.wrongType, first, "expected [[backends]] entries, got \(ConfigTable.describe(value))")
        }
        guard !array.isEmpty else { throw root.source.error(.invalidValue, first, "needs at least one backend") }
        var backends: [BackendSettings] = []
        var firstLines: [String: Int] = [:]
        for (index, element) in array.enumerated() {
            let section = ConfigSection(name: "backends", occurrence: index)
            guard let table = element.table else {
                throw root.source.error(.wrongType, section, "expected a table, got \(ConfigTable.describe(element))")
            }
            let entry = try ConfigTable(table: table, section: section, source: root.source).adoptingRenamedKeys()
            let backend = try Self.backend(entry)
            if backends.contains(where: { $0.name == backend.name }) {
                let previous = firstLines[backend.name].map { " (first defined on line \($0))" } ?? ""
                throw entry.error(.duplicateName, key: "name", "duplicate backend name \(quoted(backend.name))\(previous)")
            }
            firstLines[backend.name] = root.source.locator.line(of: section, key: "name")
            backends.append(backend)
        }
        return backends
    }

    /// The keys each backend kind accepts besides `name` and `kind`.
    private static let backendKeys: [(kind: String, keys: [String])] = [
        ("echo", ["delay_ms"]),
        ("command", ["command", "timeout_seconds", "max_seconds", "env"]),
        ("openclaw", ["url", "session_key", "allow_self_signed", "expose_nodes"]),
        ("companion", ["url", "token", "working_directory", "allow_self_signed"]),
        ("claude-code", claudeCodeKeys),
        ("clawline", ["url", "device_name", "allow_self_signed"]),
        ("discoclaw", ["url", "token", "setup_token", "allow_self_signed", "conversation_title_prefix"]),
    ]

    private static func backend(_ entry: ConfigTable) throws(ConfigError) -> BackendSettings {
        let kinds = backendKeys.map(\.kind).map { "\"\($0)\"" }.joined(separator: ", ")
        try entry.rejectUnknownKeys(["name", "kind"] + backendKeys.flatMap(\.keys))
        guard let name = try entry.string("name") else { throw entry.error(.missingKey, key: "name", "every backend needs a name") }
        guard Self.isBackendName(name) else {
            throw entry.error(
                .invalidValue,
                key: "name",
                "expected 1 to 64 letters, digits, -, _ or . (not starting with .), got \(quoted(name)); the name is also the file name of the account's state in <data_dir>/accounts"
            )
        }
        guard let kind = try entry.string("kind") else { throw entry.error(.missingKey, key: "kind", "missing; expected one of \(kinds)") }
        guard let allowed = backendKeys.first(where: { $0.kind == kind })?.keys else {
            throw entry.error(.invalidValue, key: "kind", "expected one of \(kinds), got \(quoted(kind))")
        }
        for (owner, keys) in backendKeys where owner != kind {
            if let key = keys.first(where: { entry.contains($0) && !allowed.contains($0) }) {
                throw entry.error(.invalidValue, key: key, #"applies only to kind = "\#(owner)""#)
            }
        }
        switch kind {
        case "echo":
            return BackendSettings(name: name, kind: .echo(delayMillis: try entry.integer("delay_ms", minimum: 0) ?? 0))
        case "claude-code":
            return BackendSettings(name: name, kind: .claudeCode(try claudeCode(entry)))
        case "companion":
            let target = try upstreamURL(entry, kind: kind, example: "ws://host:3001/ws")
            guard let token = try entry.string("token"), !token.isEmpty else {
                throw entry.error(.missingKey, key: "token", "missing; the server's auth token (on another clawrelay: clawrelay companion token)")
            }
            return BackendSettings(
                name: name,
                kind: .companion(
                    url: target,
                    token: token,
                    workingDirectory: try entry.string("working_directory"),
                    allowSelfSigned: try entry.bool("allow_self_signed") ?? false
                )
            )
        case "clawline":
            let target = try upstreamURL(entry, kind: kind, example: "ws://host:18800/ws")
            let deviceName = try entry.string("device_name") ?? "clawrelay"
            guard !deviceName.isEmpty, deviceName.utf8.count <= 64 else {
                throw entry.error(.invalidValue, key: "device_name", "needs 1 to 64 bytes of UTF-8 (the provider's limit for a device name)")
            }
            return BackendSettings(
                name: name,
                kind: .clawline(url: target, deviceName: deviceName, allowSelfSigned: try entry.bool("allow_self_signed") ?? false)
            )
        case "discoclaw":
            return try discoClawBackend(name: name, entry)
        case "openclaw":
            let target = try upstreamURL(entry, kind: kind, example: "ws://host:18789")
            return BackendSettings(
                name: name,
                kind: .openclaw(
                    url: target,
                    sessionKey: try entry.string("session_key"),
                    allowSelfSigned: try entry.bool("allow_self_signed") ?? false,
                    exposeNodes: try entry.bool("expose_nodes") ?? false
                )
            )
        default:
            guard let command = try entry.strings("command") else {
                throw entry.error(.missingKey, key: "command", #"missing; a command backend needs command = ["program", "argument", ...]"#)
            }
            guard let program = command.first, !program.isEmpty else {
                throw entry.error(.invalidValue, key: "command", "needs at least the program to run")
            }
            return BackendSettings(
                name: name,
                kind: .command(
                    command: command,
                    timeoutSeconds: try entry.integer("timeout_seconds") ?? 30,
                    maxSeconds: try entry.integer("max_seconds"),
                    environment: try entry.stringTable("env") ?? [:]
                )
            )
        }
    }

    /// 1 to 64 ASCII letters, digits, `-`, `_` and `.`, not starting with `.`: a backend's name is
    /// also the name of its account's files, and a word in gateway session keys.
    static func isBackendName(_ name: String) -> Bool {
        let scalars = name.unicodeScalars
        guard (1...64).contains(scalars.count), scalars.first != "." else { return false }
        return scalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) }
    }

    /// The `url` of an upstream account: required, `ws://` or `wss://`.
    private static func upstreamURL(_ entry: ConfigTable, kind: String, example: String) throws(ConfigError) -> WebSocketURL {
        guard let url = try entry.string("url") else {
            let article = kind.first.map { "aeiou".contains($0) } == true ? "an" : "a"
            throw entry.error(.missingKey, key: "url", "missing; \(article) \(kind) backend needs url = \"\(example)\"")
        }
        guard let target = WebSocketURL(url) else {
            throw entry.error(.invalidValue, key: "url", "expected ws://host:port[/path] or wss://host:port[/path], got \(quoted(url))")
        }
        return target
    }
}
