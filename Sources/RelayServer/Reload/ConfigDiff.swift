/// What a reload would change: the running configuration against the file's, key by key, each
/// change applied live or needing a restart. Pure: the relay applies `applicable` and logs
/// `changes`.
public enum ConfigDiff {
    /// Every difference, in file order: `[server]`, the listeners, `[audit]`, `[push]`, `[[backends]]`.
    public static func changes(from old: RelayConfig, to new: RelayConfig) -> [ConfigChange] {
        var changes: [ConfigChange] = []
        if old.logLevel != new.logLevel { changes.append(.changed("log_level of [server]", from: old.logLevel, to: new.logLevel)) }
        if old.logFormat != new.logFormat { changes.append(.changed("log_format of [server]", from: old.logFormat, to: new.logFormat)) }
        if old.eventLoop != new.eventLoop {
            changes.append(.changed("event_loop of [server]", from: old.eventLoop.rawValue, to: new.eventLoop.rawValue, needsRestart: true))
        }
        if old.dataDirectory != new.dataDirectory {
            changes.append(.changed("data_dir of [server]", from: old.dataDirectory, to: new.dataDirectory, needsRestart: true))
        }
        if old.store != new.store {
            changes.append(.changed("[store]", from: old.store.description, to: new.store.description, needsRestart: true))
        }
        if old.cluster != new.cluster {
            let describe = { (settings: ClusterSettings?) in settings?.description ?? "none" }
            changes.append(.changed("[cluster]", from: describe(old.cluster), to: describe(new.cluster), needsRestart: true))
        }
        changes += section("[admin]", old.admin, new.admin, restartOnly: true) { old, new in
            old == new ? [] : [.changed("listen of [admin]", from: old.description, to: new.description, needsRestart: true)]
        }
        changes += listener("[clawline]", old.clawline, new.clawline, keys: clawlineKeys)
        changes += listener("[gateway]", old.gateway, new.gateway, keys: gatewayKeys)
        changes += listener("[companion]", old.companion, new.companion, keys: companionKeys)
        changes += listener("[discoclaw]", old.discoClaw, new.discoClaw, keys: discoClawKeys)
        changes += SettingKey.changes(auditKeys, in: "[audit]", from: old.audit, to: new.audit)
        changes += section("[push]", old.push, new.push, restartOnly: false) { old, new in
            SettingKey.changes(pushKeys, in: "[push]", from: old, to: new)
        }
        changes += backends(from: old.backends, to: new.backends)
        return changes
    }

    /// The configuration the relay runs after a reload: `new`, except what needs a restart, which
    /// stays as `old` has it (so the next reload still reports it).
    public static func applicable(from old: RelayConfig, to new: RelayConfig) -> RelayConfig {
        var next = new
        next.dataDirectory = old.dataDirectory
        next.store = old.store
        next.cluster = old.cluster
        next.eventLoop = old.eventLoop
        next.admin = old.admin
        next.audit = old.audit
        next.clawline = kept(old.clawline, new.clawline, keys: clawlineKeys)
        next.gateway = kept(old.gateway, new.gateway, keys: gatewayKeys)
        next.companion = kept(old.companion, new.companion, keys: companionKeys)
        next.discoClaw = kept(old.discoClaw, new.discoClaw, keys: discoClawKeys)
        return next
    }

    /// A section that may be absent on either side: added or removed (live unless `restartOnly`),
    /// else the changes `compare` finds.
    private static func section<Settings>(
        _ name: String,
        _ old: Settings?,
        _ new: Settings?,
        restartOnly: Bool,
        compare: (Settings, Settings) -> [ConfigChange]
    ) -> [ConfigChange] {
        switch (old, new) {
        case (nil, nil): []
        case (nil, .some): [ConfigChange(name, "added", needsRestart: restartOnly)]
        case (.some, nil): [ConfigChange(name, "removed", needsRestart: restartOnly)]
        case (let old?, let new?): compare(old, new)
        }
    }

    /// A listener: added or removed needs a restart; else its keys.
    private static func listener<Settings>(_ name: String, _ old: Settings?, _ new: Settings?, keys: [SettingKey<Settings>]) -> [ConfigChange] {
        section(name, old, new, restartOnly: true) { old, new in SettingKey.changes(keys, in: name, from: old, to: new) }
    }

    private static func kept<Settings>(_ old: Settings?, _ new: Settings?, keys: [SettingKey<Settings>]) -> Settings? {
        guard let old else { return nil }
        guard let new else { return old }
        return SettingKey.applicable(keys, from: old, to: new)
    }

    /// `[[backends]]` by name: added, removed, changed; the default (the first) when it moves;
    /// and `expose_nodes`, which the gateway listener reads at start, needing a restart.
    static func backends(from old: [BackendSettings], to new: [BackendSettings]) -> [ConfigChange] {
        var changes: [ConfigChange] = []
        let before = Dictionary(old.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Dictionary(new.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for backend in new {
            guard let previous = before[backend.name] else {
                changes.append(ConfigChange("[[backends]] \(backend.name)", "added", detail: backend.kindName))
                continue
            }
            guard previous != backend else { continue }
            let detail = previous.kindName == backend.kindName ? nil : "\(previous.kindName) → \(backend.kindName)"
            changes.append(ConfigChange("[[backends]] \(backend.name)", "changed", detail: detail))
        }
        for backend in old where after[backend.name] == nil {
            changes.append(ConfigChange("[[backends]] \(backend.name)", "removed"))
        }
        for name in Set(old.map(\.name)).union(new.map(\.name)).sorted() {
            let (was, now) = (before[name]?.exposeNodes == true, after[name]?.exposeNodes == true)
            guard was || now, before[name] != after[name] else { continue }
            changes.append(ConfigChange("expose_nodes of [[backends]] \(name)", "changed", detail: "\(was) → \(now)", needsRestart: true))
        }
        if let first = old.first?.name, let next = new.first?.name, first != next {
            changes.append(.changed("the default backend (the first [[backends]])", from: first, to: next))
        }
        return changes
    }
}

extension BackendSettings {
    /// An `openclaw` account's `expose_nodes`; nil for other kinds.
    var exposeNodes: Bool? {
        if case .openclaw(_, _, _, let expose) = kind { expose } else { nil }
    }
}
