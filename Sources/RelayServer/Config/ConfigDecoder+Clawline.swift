import ClawlineBridge

extension ConfigDecoder {
    /// `[clawline]` keys that are positive integers, and where each goes.
    static var clawlineIntegers: [(key: String, field: WritableKeyPath<ClawlineSettings, Int>)] {
        [
            ("pending_ttl_seconds", \.pendingTTLSeconds),
            ("max_pending_requests", \.maxPendingRequests),
            ("token_ttl_seconds", \.tokenTTLSeconds),
            ("max_replay_messages", \.maxReplayMessages),
            ("max_queued_turns", \.maxQueuedMessages),
            ("stream_inactivity_seconds", \.streamInactivitySeconds),
            ("messages_per_second", \.messagesPerSecond),
            ("typing_per_second", \.typingPerSecond),
            ("pair_requests_per_minute", \.pairRequestsPerMinute),
            ("auth_attempts_per_minute", \.authAttemptsPerMinute),
            ("typing_timeout_seconds", \.typingTimeoutSeconds),
            ("ping_interval_seconds", \.pingIntervalSeconds),
            ("pong_timeout_seconds", \.pongTimeoutSeconds),
            ("max_upload_bytes", \.maxUploadBytes),
            ("max_frame_bytes", \.maxFrameBytes),
        ]
    }

    /// Every key `[clawline]` accepts.
    static var clawlineKeys: [String] {
        ["listen", "allow_public", "tls_cert", "tls_key"] + clawlineIntegers.map(\.key) + ["backend", "admin_backend", "cancel_on_disconnect"]
    }

    static func clawline(_ table: ConfigTable, backends: [BackendSettings]) throws(ConfigError) -> ClawlineSettings {
        let integers = clawlineIntegers
        try table.rejectUnknownKeys(clawlineKeys)
        var settings = ClawlineSettings()
        let endpoint = try table.endpoint("listen", default: RelayConfig.defaultClawlineEndpoint)
        settings.host = endpoint.host
        settings.port = endpoint.port
        for (key, field) in integers {
            if let value = try table.integer(key) { settings[keyPath: field] = value }
        }

        (settings.tlsCertificatePath, settings.tlsKeyPath) = try table.tlsPaths()

        settings.backend = try table.backendName(among: backends)
        settings.adminBackend = try table.backendName(among: backends, key: "admin_backend")
        settings.cancelOnDisconnect = try table.bool("cancel_on_disconnect") ?? settings.cancelOnDisconnect
        return settings
    }
}
