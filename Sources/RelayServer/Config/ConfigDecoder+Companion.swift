import CompanionBridge

extension ConfigDecoder {
    /// `[companion]` keys that are positive integers, and where each goes.
    static var companionIntegers: [(key: String, field: WritableKeyPath<CompanionSettings, Int>)] {
        [
            ("max_sessions", \.maxSessions),
            ("queue_ttl_seconds", \.queueTTLSeconds),
            ("max_queued_events", \.maxQueuedEvents),
            ("ping_interval_seconds", \.pingIntervalSeconds),
            ("idle_seconds", \.idleSeconds),
            ("background_idle_seconds", \.backgroundIdleSeconds),
            ("stream_inactivity_seconds", \.streamInactivitySeconds),
            ("max_queued_turns", \.maxQueuedCommands),
            ("max_frame_bytes", \.maxFrameBytes),
        ]
    }

    /// Every key `[companion]` accepts.
    static var companionKeys: [String] {
        ["listen", "allow_public", "tls_cert", "tls_key", "auth_token", "user_id", "backend", "projects_root", "routes"]
            + companionIntegers.map(\.key)
    }

    static func companion(_ table: ConfigTable, backends: [BackendSettings]) throws(ConfigError) -> CompanionSettings {
        let integers = companionIntegers
        try table.rejectUnknownKeys(companionKeys)
        var settings = CompanionSettings()
        let endpoint = try table.endpoint("listen", default: RelayConfig.defaultCompanionEndpoint)
        settings.host = endpoint.host
        settings.port = endpoint.port
        for (key, field) in integers {
            if let value = try table.integer(key) { settings[keyPath: field] = value }
        }
        (settings.tlsCertificatePath, settings.tlsKeyPath) = try table.tlsPaths()
        if let token = try table.string("auth_token") {
            guard token.utf8.count >= 16, token.utf8.allSatisfy({ byte in CompanionSettings.tokenAlphabet.contains(byte) }) else {
                throw table.error(.invalidValue, key: "auth_token", "needs at least 16 characters from A-Z a-z 0-9 - _ (the app puts it in a URL)")
            }
            settings.authToken = token
        }
        if let user = try table.string("user_id") {
            guard !user.isEmpty else { throw table.error(.invalidValue, key: "user_id", "must not be empty") }
            settings.userID = user
        }
        if let root = try table.string("projects_root") {
            guard !root.isEmpty else { throw table.error(.invalidValue, key: "projects_root", "must not be empty") }
            settings.projectsRoot = root
        }
        settings.backend = try table.backendName(among: backends)
        for entry in try table.entries("routes") {
            try entry.rejectUnknownKeys(["directory_prefix", "backend"])
            guard let prefix = try entry.string("directory_prefix"), prefix.hasPrefix("/") else {
                throw entry.error(.missingKey, key: "directory_prefix", #"every route needs an absolute directory_prefix = "/path""#)
            }
            guard let backend = try entry.backendName(among: backends) else {
                throw entry.error(.missingKey, key: "backend", "every route needs the backend its sessions use")
            }
            settings.routes.append(CompanionSettings.Route(directoryPrefix: prefix, backend: backend))
        }
        return settings
    }
}
