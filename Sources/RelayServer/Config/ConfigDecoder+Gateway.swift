import GatewayBridge
import RelayTransport

extension ConfigDecoder {
    static var gatewayIntegers: [(key: String, field: WritableKeyPath<GatewaySettings, Int>)] {
        [
            ("tick_interval_ms", \.tickIntervalMillis),
            ("handshake_timeout_ms", \.handshakeTimeoutMillis),
            ("pending_ttl_seconds", \.pendingTTLSeconds),
            ("max_pending_requests", \.maxPendingRequests),
            ("invoke_timeout_ms", \.invokeTimeoutMillis),
            ("max_frame_bytes", \.maxPayloadBytes),
            ("max_buffered_bytes", \.maxBufferedBytes),
            ("max_protocol", \.maxProtocol),
        ]
    }

    /// Every key `[gateway]` accepts.
    static var gatewayKeys: [String] {
        [
            "listen", "allow_public", "tls_cert", "tls_key", "user_id", "backend", "name", "shared_token", "password", "auto_approve_loopback",
            "mdns", "lan_host", "queue_until_foreground", "control_ui_dir",
        ] + gatewayIntegers.map(\.key)
    }

    static func gateway(_ table: ConfigTable, backends: [BackendSettings]) throws(ConfigError) -> GatewaySettings {
        let integers = gatewayIntegers
        try table.rejectUnknownKeys(gatewayKeys)
        var settings = GatewaySettings()
        let endpoint = try table.endpoint("listen", default: RelayConfig.defaultGatewayEndpoint)
        settings.host = endpoint.host
        settings.port = endpoint.port
        for (key, field) in integers {
            if let value = try table.integer(key) { settings[keyPath: field] = value }
        }
        // A socket holding more unsent bytes is closed as a slow consumer: one message must fit.
        guard settings.maxBufferedBytes >= settings.maxPayloadBytes else {
            throw table.error(
                .invalidValue,
                key: "max_buffered_bytes",
                "must be at least \(table.writtenAs["max_frame_bytes"] ?? "max_frame_bytes") (\(settings.maxPayloadBytes)): one message must fit in a socket's unsent bytes"
            )
        }
        (settings.tlsCertificatePath, settings.tlsKeyPath) = try table.tlsPaths()
        if let user = try table.string("user_id") { settings.userID = user }
        if let name = try table.string("name") { settings.name = name }
        settings.sharedToken = try table.string("shared_token")
        settings.password = try table.string("password")
        settings.autoApproveLoopback = try table.bool("auto_approve_loopback") ?? false
        settings.mdns = try table.bool("mdns") ?? false
        settings.queueUntilForeground = try table.bool("queue_until_foreground") ?? false
        settings.lanHost = try table.string("lan_host")
        if let directory = try table.string("control_ui_dir") {
            do throws(StaticSite.Unusable) {
                _ = try StaticSite(directory: directory)
            } catch {
                throw table.error(.invalidValue, key: "control_ui_dir", "\(error)")
            }
            settings.controlUIDirectory = directory
        }
        settings.backend = try table.backendName(among: backends)
        settings.backendKinds = BackendSettings.kindsByName(backends)
        guard (3...4).contains(settings.maxProtocol) else {
            throw table.error(.invalidValue, key: "max_protocol", "must be 3 or 4, got \(settings.maxProtocol)")
        }
        return settings
    }
}
