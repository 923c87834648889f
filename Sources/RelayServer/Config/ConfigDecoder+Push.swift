import Foundation
import RelayCore
import RelayPush
import TOMLKit

extension ConfigDecoder {
    static let pushKeys = [
        "apns_key_file", "apns_key_id", "apns_team_id", "apns_topic", "apns_environment", "apns_endpoint", "apns_ca_file", "ntfy_url", "ntfy_token",
        "webhooks", "delay_seconds", "quiet_hours", "timezone", "retry_base_ms", "long_run_seconds",
    ]

    static func push(_ table: ConfigTable) throws(ConfigError) -> PushSettings {
        try table.rejectUnknownKeys(pushKeys)
        var settings = PushSettings()
        let apnsKeys = ["apns_key_file", "apns_key_id", "apns_team_id", "apns_topic"]
        if apnsKeys.contains(where: table.contains) || table.contains("apns_environment") || table.contains("apns_endpoint") {
            var values: [String: String] = [:]
            for key in apnsKeys {
                guard let value = try table.string(key), !value.isEmpty else {
                    throw table.error(
                        .missingKey,
                        key: key,
                        "APNs needs apns_key_file, apns_key_id, apns_team_id and apns_topic (see README, Push notifications)"
                    )
                }
                values[key] = value
            }
            for key in ["apns_key_id", "apns_team_id"]
            where !(values[key]!.utf8.count <= 64 && values[key]!.allSatisfy { $0.isLetter || $0.isNumber }) {
                throw table.error(.invalidValue, key: key, "expected Apple's 10-character identifier, got \(quoted(values[key]!))")
            }
            var endpoint = PushSettings.APNs.production
            switch try table.string("apns_environment") {
            case nil, "production": break
            case "sandbox": endpoint = PushSettings.APNs.sandbox
            case let other?: throw table.error(.invalidValue, key: "apns_environment", "expected production or sandbox, got \(quoted(other))")
            }
            if let given = try table.string("apns_endpoint") {
                guard given.hasPrefix("https://") else {
                    throw table.error(.invalidValue, key: "apns_endpoint", "APNs is only reached over https://")
                }
                endpoint = given.hasSuffix("/") ? String(given.dropLast()) : given
            }
            settings.apns = PushSettings.APNs(
                keyFile: values["apns_key_file"]!,
                keyID: values["apns_key_id"]!,
                teamID: values["apns_team_id"]!,
                topic: values["apns_topic"]!,
                endpoint: endpoint
            )
        }
        settings.caFile = try table.string("apns_ca_file")
        if let url = try table.string("ntfy_url") {
            guard PushTarget.origin(of: url) != nil else {
                throw table.error(.invalidValue, key: "ntfy_url", "expected an http:// or https:// URL with a host, got \(quoted(url))")
            }
            settings.ntfyURL = url
        }
        settings.ntfyToken = try table.string("ntfy_token")
        settings.webhooks = try webhooks(table)
        if let delay = try table.integer("delay_seconds", minimum: 0) {
            guard delay <= 86_400 else { throw table.error(.invalidValue, key: "delay_seconds", "at most 86400 (a day), got \(delay)") }
            settings.delaySeconds = delay
        }
        if let zone = try table.string("timezone") {
            guard TimeZone(identifier: zone) != nil else {
                throw table.error(.invalidValue, key: "timezone", "unknown time zone \(quoted(zone)); use an IANA name such as Europe/Berlin")
            }
            settings.timezone = zone
        }
        if let quiet = try table.string("quiet_hours") {
            guard QuietHours(quiet, timeZone: .current) != nil else {
                throw table.error(.invalidValue, key: "quiet_hours", "expected HH:MM-HH:MM such as 22:00-07:00, got \(quoted(quiet))")
            }
            settings.quietHours = quiet
        }
        if let base = try table.integer("retry_base_ms") {
            guard base <= 60_000 else { throw table.error(.invalidValue, key: "retry_base_ms", "at most 60000, got \(base)") }
            settings.retryBaseMillis = base
        }
        if let seconds = try table.integer("long_run_seconds") { settings.longRunSeconds = seconds }
        return settings
    }

    /// `[[push.webhooks]]` entries: `url` and `secret`.
    private static func webhooks(_ table: ConfigTable) throws(ConfigError) -> [PushSettings.Webhook] {
        var hooks: [PushSettings.Webhook] = []
        for entry in try table.entries("webhooks") {
            try entry.rejectUnknownKeys(["url", "secret"])
            guard let url = try entry.string("url"), PushTarget.origin(of: url) != nil else {
                throw entry.error(.missingKey, key: "url", "every webhook needs url = \"https://host/…\"")
            }
            guard let secret = try entry.string("secret"), secret.utf8.count >= 16 else {
                throw entry.error(.missingKey, key: "secret", "every webhook needs a secret of at least 16 characters (it signs each body)")
            }
            hooks.append(PushSettings.Webhook(url: url, secret: secret))
        }
        return hooks
    }
}
