import ClawlineBridge
import CompanionBridge
import DiscoClawBridge
import GatewayBridge
import RelayPush

extension ClawlineSettings: ListenerSection {}
extension GatewaySettings: ListenerSection {}
extension CompanionSettings: ListenerSection {}
extension DiscoClawSettings: ListenerSection {}

/// Each section's keys and whether a reload applies them: what the transport binds (address,
/// TLS, frame sizes, pings), who a listener's users are and where its files live need a restart;
/// backends, routes, limits, timeouts and tokens checked per request apply live.
extension ConfigDiff {
    static var clawlineKeys: [SettingKey<ClawlineSettings>] {
        SettingKey.listenerKeys
            + SettingKey.integerKeys(
                ConfigDecoder.clawlineIntegers,
                restart: ["ping_interval_seconds", "pong_timeout_seconds", "max_frame_bytes"]
            ) + [.key("backend", \.backend), .key("admin_backend", \.adminBackend), .key("cancel_on_disconnect", \.cancelOnDisconnect)]
    }

    static var gatewayKeys: [SettingKey<GatewaySettings>] {
        SettingKey.listenerKeys + SettingKey.integerKeys(ConfigDecoder.gatewayIntegers, restart: ["max_frame_bytes", "max_buffered_bytes"]) + [
            .key("user_id", \.userID, restart: true), .key("backend", \.backend), .key("name", \.name, restart: true),
            .key("shared_token", \.sharedToken, secret: true), .key("password", \.password, secret: true),
            .key("auto_approve_loopback", \.autoApproveLoopback), .key("mdns", \.mdns, restart: true), .key("lan_host", \.lanHost, restart: true),
            .key("queue_until_foreground", \.queueUntilForeground), .key("control_ui_dir", \.controlUIDirectory),
        ]
    }

    static var companionKeys: [SettingKey<CompanionSettings>] {
        SettingKey.listenerKeys + SettingKey.integerKeys(ConfigDecoder.companionIntegers, restart: ["ping_interval_seconds", "max_frame_bytes"]) + [
            .key("auth_token", \.authToken, restart: true, secret: true), .key("user_id", \.userID, restart: true), .key("backend", \.backend),
            .key("projects_root", \.projectsRoot, restart: true),
            SettingKey(
                name: "routes",
                needsRestart: false,
                differs: { $0.routes != $1.routes },
                shown: { settings in
                    settings.routes.isEmpty ? "none" : settings.routes.map { "\($0.directoryPrefix): \($0.backend)" }.joined(separator: ", ")
                },
                keep: { $0.routes = $1.routes }
            ),
        ]
    }

    static var discoClawKeys: [SettingKey<DiscoClawSettings>] {
        SettingKey.listenerKeys + SettingKey.integerKeys(ConfigDecoder.discoClawIntegers, restart: ["ping_interval_seconds"]) + [
            .key("setup_token", \.setupToken, secret: true), .key("user_id", \.userID, restart: true), .key("backend", \.backend),
            .key("users", \.users, restart: true, secret: true),
        ]
    }

    /// `[push]`: everything applies live (the sinks are built anew).
    static var pushKeys: [SettingKey<PushSettings>] {
        [
            SettingKey(
                name: "apns_*",
                needsRestart: false,
                differs: { $0.apns != $1.apns },
                shown: { $0.apns.map { "\($0.keyFile), \($0.keyID), \($0.topic), \($0.endpoint)" } ?? "none" },
                keep: { $0.apns = $1.apns }
            ),
            .key("apns_ca_file", \.caFile), .key("ntfy_url", \.ntfyURL), .key("ntfy_token", \.ntfyToken, secret: true),
            .key("webhooks", \.webhooks, secret: true), .key("delay_seconds", \.delaySeconds), .key("quiet_hours", \.quietHours),
            .key("timezone", \.timezone), .key("retry_base_ms", \.retryBaseMillis), .key("long_run_seconds", \.longRunSeconds),
        ]
    }

    static var auditKeys: [SettingKey<AuditSettings>] {
        [
            .key("enabled", \.enabled, restart: true), .key("retention_days", \.retentionDays, restart: true),
            .key("admin", \.admin, restart: true),
        ]
    }
}
