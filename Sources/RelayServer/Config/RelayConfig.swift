import ClawlineBridge
import CompanionBridge
import DiscoClawBridge
import Foundation
import GatewayBridge
import RelayPush
import RelayTransport
import TOMLKit

/// Everything the relay reads from its TOML file, validated once at start-up.
public struct RelayConfig: Sendable {
    /// `[server] data_dir`: SQLite database, keys and uploads.
    public var dataDirectory: String
    /// `[server] log_level`: trace, debug, info, notice, warning or error.
    public var logLevel: String
    /// `[server] log_format`: `text` (one line per entry) or `json` (one object per line).
    public var logFormat = "text"
    /// `[server] event_loop`: what runs the sockets' thread; `epoll` (the default: the whole e2e
    /// suite passes on it) or `poll` (lws's own loop, as before).
    public var eventLoop = EventLoopKind.epoll
    /// `[admin]`: health and metrics; nil when the section is absent.
    public var admin: ListenEndpoint?
    /// `[clawline]`: the Clawline listener; nil when the section is absent.
    public var clawline: ClawlineSettings?
    /// `[gateway]`: the OpenClaw gateway listener; nil when the section is absent.
    public var gateway: GatewaySettings?
    /// `[companion]`: the Claude Companion listener; nil when the section is absent.
    public var companion: CompanionSettings?
    /// `[discoclaw]`: the DiscoClaw native-client listener; nil when the section is absent.
    public var discoClaw: DiscoClawSettings?
    public var audit: AuditSettings
    /// `[store]`: SQLite in the data directory unless it says PostgreSQL.
    public var store = StoreSettings()
    /// `[cluster]`: one node of several on the `[store]`'s PostgreSQL; nil = a relay on its own.
    public var cluster: ClusterSettings?
    /// `[push]`: APNs, ntfy and webhooks; nil when the section is absent (no pushes).
    public var push: PushSettings?
    /// `[[backends]]`, in file order; never empty.
    public var backends: [BackendSettings]
    /// The file this came from; nil for the embedded default or parsed text.
    public var sourcePath: String?
    /// What the file should write differently (old key names), in file order.
    public var warnings: [ConfigWarning] = []
    /// The file name errors name and where each section and key is written in it, for errors
    /// found after decoding (`ConfigCheck`); nil for the embedded default.
    var written: (fileName: String, lines: ConfigLineLocator)?

    public static let defaultDataDirectory = "./.clawrelay"
    public static let logLevels = ["trace", "debug", "info", "notice", "warning", "error"]
    public static let logFormats = ["text", "json"]
    /// Every kind of listener, as the audit and `/metrics` name their protocol.
    public static let listenerKinds = ["clawline", "gateway", "companion", "discoclaw", "admin"]
    public static let defaultAdminEndpoint = ListenEndpoint(host: "127.0.0.1", port: 8787)
    public static let defaultClawlineEndpoint = ListenEndpoint(host: "127.0.0.1", port: 18800)
    public static let defaultGatewayEndpoint = ListenEndpoint(host: "127.0.0.1", port: 18789)
    public static let defaultCompanionEndpoint = ListenEndpoint(host: "127.0.0.1", port: 3001)
    public static let defaultDiscoClawEndpoint = ListenEndpoint(host: "127.0.0.1", port: 4242)

    public init(
        dataDirectory: String = Self.defaultDataDirectory,
        logLevel: String = "info",
        admin: ListenEndpoint? = nil,
        clawline: ClawlineSettings? = nil,
        audit: AuditSettings = AuditSettings(),
        backends: [BackendSettings] = [.defaultEcho],
        sourcePath: String? = nil
    ) {
        self.dataDirectory = dataDirectory
        self.logLevel = logLevel
        self.admin = admin
        self.clawline = clawline
        self.audit = audit
        self.backends = backends
        self.sourcePath = sourcePath
    }

    /// The configuration without a file: every listener on loopback at its default port, the echo backend.
    public static func embeddedDefault(dataDirectory: String = defaultDataDirectory) -> RelayConfig {
        var config = RelayConfig(dataDirectory: dataDirectory, admin: defaultAdminEndpoint, clawline: ClawlineSettings())
        var gateway = GatewaySettings()
        gateway.backendKinds = BackendSettings.kindsByName(config.backends)
        config.gateway = gateway
        config.companion = CompanionSettings()
        return config
    }

    /// Each configured listener's section name, host and port, in start-up order.
    var listenAddresses: [(name: String, host: String, port: Int)] {
        [
            admin.map { ("admin", $0.host, $0.port) }, clawline.map { ("clawline", $0.host, $0.port) },
            gateway.map { ("gateway", $0.host, $0.port) }, companion.map { ("companion", $0.host, $0.port) },
            discoClaw.map { ("discoclaw", $0.host, $0.port) },
        ].compactMap { $0 }
    }

    /// Each listener served over TLS: its section name and the `tls_cert` and `tls_key` paths.
    var tlsListeners: [(name: String, certificate: String, key: String)] {
        let listeners: [(String, String?, String?)] = [
            ("clawline", clawline?.tlsCertificatePath, clawline?.tlsKeyPath), ("gateway", gateway?.tlsCertificatePath, gateway?.tlsKeyPath),
            ("companion", companion?.tlsCertificatePath, companion?.tlsKeyPath), ("discoclaw", discoClaw?.tlsCertificatePath, discoClaw?.tlsKeyPath),
        ]
        return listeners.compactMap { name, certificate, key in certificate.flatMap { certificate in key.map { (name, certificate, $0) } } }
    }

    /// An error about `key` of `section`, located in the file like the decoder's own.
    func error(_ code: ConfigError.Code, _ section: ConfigSection, key: String?, _ message: String) -> ConfigError {
        ConfigError(
            code: code,
            file: written?.fileName ?? "the embedded default",
            line: written?.lines.line(of: section, key: key),
            section: section.label,
            key: key,
            message: message
        )
    }

    /// Reads and validates the file at `path`.
    public static func load(path: String) throws(ConfigError) -> RelayConfig {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw ConfigError(code: .unreadable, file: path, line: nil, section: nil, key: nil, message: "no such file; --config takes a TOML file")
        }
        guard !isFolder.boolValue else {
            throw ConfigError(code: .unreadable, file: path, line: nil, section: nil, key: nil, message: "is a folder; --config takes a TOML file")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? error.localizedDescription
            throw ConfigError(code: .unreadable, file: path, line: nil, section: nil, key: nil, message: "cannot read the file: \(reason)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigError(code: .unreadable, file: path, line: nil, section: nil, key: nil, message: "the file is not UTF-8 text")
        }
        var config = try parse(text: text, fileName: path)
        config.sourcePath = path
        // A relative data_dir is the config file's, wherever the command runs from.
        if !config.dataDirectory.hasPrefix("/") {
            let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
            let folder = (absolute as NSString).deletingLastPathComponent
            config.dataDirectory = ((folder as NSString).appendingPathComponent(config.dataDirectory) as NSString).standardizingPath
        }
        return config
    }

    /// Validates TOML `text`; `fileName` is only used in error messages.
    public static func parse(text: String, fileName: String) throws(ConfigError) -> RelayConfig {
        // TOMLKit hands the text to C++ as a C string, which would silently end at a NUL.
        if let nul = text.utf8.firstIndex(of: 0) {
            let line = text.utf8[..<nul].count(where: { $0 == UInt8(ascii: "\n") }) + 1
            throw ConfigError(code: .syntax, file: fileName, line: line, section: nil, key: nil, message: "NUL character in the file")
        }
        if let bad = TableHeaderCheck.firstInvalid(in: text) {
            throw ConfigError(
                code: .syntax,
                file: fileName,
                line: bad.line,
                section: nil,
                key: nil,
                message: "a table name must start with a letter, digit, _, - or a quote, not \(bad.found)"
            )
        }
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            // An unquoted `listen = 127.0.0.1:0` reads as a TOML time: say what was meant.
            let hint =
                error.description.contains("parsing time") || error.description.contains("parsing date")
                ? #" (an address must be quoted: listen = "127.0.0.1:18800")"# : ""
            throw ConfigError(code: .syntax, file: fileName, line: error.source.begin.line, section: nil, key: nil, message: error.description + hint)
        } catch {
            throw ConfigError(code: .syntax, file: fileName, line: nil, section: nil, key: nil, message: "\(error)")
        }
        let source = ConfigSource(fileName: fileName, locator: ConfigLineLocator(text: text))
        var config = try ConfigDecoder(root: ConfigTable(table: root, section: .root, source: source)).decode()
        config.warnings = source.warnings.items
        config.written = (fileName, source.locator)
        return config
    }
}
