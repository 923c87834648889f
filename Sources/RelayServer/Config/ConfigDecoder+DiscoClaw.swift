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
        ["listen", "allow_public", "tls_cert", "tls_key", "setup_token", "user_id", "backend"] + discoClawIntegers.map(\.key)
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
        if let token = try table.string("setup_token") {
            guard token.utf8.count >= 16 else {
                throw table.error(.invalidValue, key: "setup_token", "needs at least 16 characters (anyone who has it can register)")
            }
            settings.setupToken = token
        }
        if let user = try table.string("user_id") {
            guard !user.isEmpty, user.utf8.count <= 128 else { throw table.error(.invalidValue, key: "user_id", "must be 1 to 128 bytes") }
            settings.userID = user
        }
        settings.backend = try table.backendName(among: backends)
        return settings
    }
}
