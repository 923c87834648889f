import DiscoClawBridge

extension ConfigDecoder {
    /// `[discoclaw]` keys that are positive integers, and where each goes.
    static var discoClawIntegers: [(key: String, field: WritableKeyPath<DiscoClawSettings, Int>)] {
        [
            ("max_body_bytes", \.maxBodyBytes),
            ("max_devices_per_user", \.maxDevicesPerUser),
            ("registrations_per_minute", \.registrationsPerMinute),
            ("ping_interval_seconds", \.pingIntervalSeconds),
            ("stream_inactivity_seconds", \.turnInactivitySeconds),
            ("max_queued_turns", \.maxQueuedTurns),
        ]
    }

    /// Every key `[discoclaw]` accepts.
    static var discoClawKeys: [String] {
        ["listen", "allow_public", "tls_cert", "tls_key", "setup_token", "user_id", "backend", "users"] + discoClawIntegers.map(\.key)
    }

    static func discoClaw(_ table: ConfigTable, backends: [BackendSettings]) throws(ConfigError) -> DiscoClawSettings {
        let integers = discoClawIntegers
        try table.rejectUnknownKeys(discoClawKeys)
        var settings = DiscoClawSettings()
        let endpoint = try table.endpoint("listen", default: RelayConfig.defaultDiscoClawEndpoint)
        settings.host = endpoint.host
        settings.port = endpoint.port
        for (key, field) in integers {
            if let value = try table.integer(key) { settings[keyPath: field] = value }
        }
        (settings.tlsCertificatePath, settings.tlsKeyPath) = try table.tlsPaths()
        settings.setupToken = try discoClawSetupToken(table)
        settings.userID = try discoClawUserID(table)
        for entry in try table.entries("users") {
            try entry.rejectUnknownKeys(["setup_token", "user_id"])
            guard let token = try discoClawSetupToken(entry) else {
                throw entry.error(.missingKey, key: "setup_token", "every [[discoclaw.users]] entry needs the setup token its person registers with")
            }
            guard settings.setupToken != token, !settings.users.contains(where: { $0.setupToken == token }) else {
                throw entry.error(.invalidValue, key: "setup_token", "is already another user's setup token; each person needs their own")
            }
            guard let user = try discoClawUserID(entry) else {
                throw entry.error(.missingKey, key: "user_id", "every [[discoclaw.users]] entry needs the user its devices join")
            }
            settings.users.append(DiscoClawSettings.User(setupToken: token, userID: user))
        }
        settings.backend = try table.backendName(among: backends)
        return settings
    }

    /// A `setup_token`: anyone who has it can register, so at least 16 characters.
    private static func discoClawSetupToken(_ table: ConfigTable) throws(ConfigError) -> String? {
        guard let token = try table.string("setup_token") else { return nil }
        guard token.utf8.count >= 16 else {
            throw table.error(.invalidValue, key: "setup_token", "needs at least 16 characters (anyone who has it can register)")
        }
        return token
    }

    private static func discoClawUserID(_ table: ConfigTable) throws(ConfigError) -> String? {
        guard let user = try table.string("user_id") else { return nil }
        guard !user.isEmpty, user.utf8.count <= 128 else { throw table.error(.invalidValue, key: "user_id", "must be 1 to 128 bytes") }
        return user
    }
}
