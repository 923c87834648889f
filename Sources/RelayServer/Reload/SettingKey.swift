/// One key of a section as a reload sees it: whether two values differ, how a value is shown
/// (never for a secret), and whether it applies live or needs a restart (then the running value
/// is kept).
struct SettingKey<Settings> {
    /// As the file writes it.
    let name: String
    let needsRestart: Bool
    let differs: (Settings, Settings) -> Bool
    /// nil for a secret: its change is logged without values.
    let shown: ((Settings) -> String)?
    /// Copies the running value (second) into the settings a reload applies (first).
    let keep: (inout Settings, Settings) -> Void

    /// A key held in one field.
    static func key<Value: Equatable>(
        _ name: String,
        _ field: WritableKeyPath<Settings, Value>,
        restart: Bool = false,
        secret: Bool = false
    ) -> SettingKey {
        SettingKey(
            name: name,
            needsRestart: restart,
            differs: { $0[keyPath: field] != $1[keyPath: field] },
            shown: secret ? nil : { SettingKey.show($0[keyPath: field]) },
            keep: { $0[keyPath: field] = $1[keyPath: field] }
        )
    }

    /// The changes of `keys` from `old` to `new` in `section` (`[clawline]`).
    static func changes(_ keys: [SettingKey], in section: String, from old: Settings, to new: Settings) -> [ConfigChange] {
        keys.filter { $0.differs(old, new) }.map { key in
            ConfigChange.changed("\(key.name) of \(section)", from: key.shown?(old), to: key.shown?(new), needsRestart: key.needsRestart)
        }
    }

    /// `new`, with the keys that need a restart as `old` has them.
    static func applicable(_ keys: [SettingKey], from old: Settings, to new: Settings) -> Settings {
        var next = new
        for key in keys where key.needsRestart { key.keep(&next, old) }
        return next
    }

    /// A value as a log line shows it: an absent optional is `none`.
    static func show(_ value: Any) -> String {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return "\(value)" }
        return mirror.children.first.map { show($0.value) } ?? "none"
    }
}

/// What every listener section has: where it listens and its TLS files.
protocol ListenerSection {
    var host: String { get set }
    var port: Int { get set }
    var tlsCertificatePath: String? { get set }
    var tlsKeyPath: String? { get set }
}

extension SettingKey where Settings: ListenerSection {
    /// `listen`, `tls_cert` and `tls_key`: the listener is bound with them, so they need a restart.
    static var listenerKeys: [SettingKey] {
        [
            SettingKey(
                name: "listen",
                needsRestart: true,
                differs: { $0.host != $1.host || $0.port != $1.port },
                shown: { ListenEndpoint(host: $0.host, port: $0.port).description },
                keep: {
                    $0.host = $1.host
                    $0.port = $1.port
                }
            ),
            .key("tls_cert", \.tlsCertificatePath, restart: true),
            .key("tls_key", \.tlsKeyPath, restart: true),
        ]
    }

    /// The listener's integer keys (as the decoder reads them), those in `restart` needing one.
    static func integerKeys(_ table: [(key: String, field: WritableKeyPath<Settings, Int>)], restart: Set<String>) -> [SettingKey] {
        table.map { .key($0.key, $0.field, restart: restart.contains($0.key)) }
    }
}
