import GatewayBridge

extension ConfigDecoder {
    private static var gatewayIntegers: [(key: String, field: WritableKeyPath<GatewaySettings, Int>)] {
        [
            ("tick_interval_ms", \.tickIntervalMillis),
            ("handshake_timeout_ms", \.handshakeTimeoutMillis),
            ("pending_ttl_seconds", \.pendingTTLSeconds),
            ("invoke_timeout_ms", \.invokeTimeoutMillis),
            ("max_payload_bytes", \.maxPayloadBytes),
            ("max_buffered_bytes", \.maxBufferedBytes),
        ]
    }

    static func gateway(_ table: ConfigTable, backends: [BackendSettings]) throws(ConfigError) -> GatewaySettings {
        let integers = gatewayIntegers
        try table.rejectUnknownKeys(
            ["listen", "allow_public", "tls_cert", "tls_key", "user_id", "backend", "name", "shared_token", "password", "auto_approve_loopback", "mdns", "lan_host", "queue_until_foreground"]
                + integers.map(\.key))
        var settings = GatewaySettings()
        let endpoint = try table.endpoint("listen", default: RelayConfig.defaultGatewayEndpoint)
        settings.host = endpoint.host
        settings.port = endpoint.port
        for (key, field) in integers {
            if let value = try table.integer(key) { settings[keyPath: field] = value }
        }
        settings.tlsCertificatePath = try table.readableFile("tls_cert")
        settings.tlsKeyPath = try table.readableFile("tls_key")
        switch (settings.tlsCertificatePath, settings.tlsKeyPath) {
        case (.some, nil): throw table.error(.missingKey, key: "tls_cert", "needs tls_key as well")
        case (nil, .some): throw table.error(.missingKey, key: "tls_key", "needs tls_cert as well")
        default: break
        }
        if let user = try table.string("user_id") { settings.userID = user }
        if let name = try table.string("name") { settings.name = name }
        settings.sharedToken = try table.string("shared_token")
        settings.password = try table.string("password")
        settings.autoApproveLoopback = try table.bool("auto_approve_loopback") ?? false
        settings.mdns = try table.bool("mdns") ?? false
        settings.queueUntilForeground = try table.bool("queue_until_foreground") ?? false
        settings.lanHost = try table.string("lan_host")
        if let backend = try table.string("backend") {
            guard backends.contains(where: { $0.name == backend }) else {
                let names = backends.map(\.name).joined(separator: ", ")
                throw table.error(.unknownBackend, key: "backend", "no backend named \(quoted(backend)); configured: \(names)")
            }
            settings.backend = backend
        }
        return settings
    }
}
