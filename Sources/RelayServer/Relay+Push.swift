import Foundation
import Logging
import RelayCore
import RelayPush

extension HTTPClient: HTTPSending {}

/// `[push]` brought to life: the HTTP client, the sinks, and the settings of the core's push
/// scheduler (`hub.pushes.enable`, or `replace` on a reload).
struct PushWiring {
    let client: HTTPClient
    let service: PushService
    let core: Pushes.Settings

    /// Nil without a `[push]` section. Throws a `StartupFailure` naming the key at fault.
    static func make(_ config: RelayConfig, loop: any LoopScheduler, logger: Logger) throws -> PushWiring? {
        guard var settings = config.push else { return nil }
        if var apns = settings.apns {
            // `ConfigCheck` made sure it reads as a .p8 key.
            apns.keyFile = Relay.path(apns.keyFile, relativeTo: config.sourcePath)
            if let mode = (try? FileManager.default.attributesOfItem(atPath: apns.keyFile))?[.posixPermissions] as? Int, mode & 0o077 != 0 {
                logger.warning(
                    "the APNs key file is readable by other users; chmod 600 it",
                    metadata: ["file": "\(apns.keyFile)", "mode": "\(String(mode, radix: 8))"]
                )
            }
            settings.apns = apns
        }
        settings.caFile = settings.caFile.map { Relay.path($0, relativeTo: config.sourcePath) }
        let zone = settings.timezone.flatMap(TimeZone.init(identifier:)) ?? .current
        let quiet = settings.quietHours.flatMap { QuietHours($0, timeZone: zone) }
        let client = HTTPClient(caFile: settings.caFile, logger: logger)
        let service: PushService
        do {
            service = try PushService(settings: settings, http: client, loop: loop, clock: SystemClock(), logger: logger)
        } catch {
            client.shutdown()
            throw StartupFailure(description: "[push] apns_key_file \(settings.apns?.keyFile ?? ""): not a .p8 (PKCS #8 P-256) key: \(error)")
        }
        let core = Pushes.Settings(
            delayMillis: Int64(settings.delaySeconds) * 1000,
            quietHours: quiet,
            longRunMillis: Int64(settings.longRunSeconds) * 1000
        )
        var sinks = settings.apns.map { ["apns (\($0.endpoint), topic \($0.topic))"] } ?? []
        sinks.append("ntfy (\(settings.ntfyURL))")
        sinks += settings.webhooks.map { "webhook \(PushTarget.origin(of: $0.url) ?? "?")" }
        logger.info(
            "push on",
            metadata: [
                "sinks": "\(sinks.joined(separator: ", "))", "delay_seconds": "\(settings.delaySeconds)",
                "quiet_hours": "\(settings.quietHours ?? "none")",
            ]
        )
        return PushWiring(client: client, service: service, core: core)
    }

    /// Its HTTP client shuts down when `stops` runs.
    func stopped(by stops: StopList) {
        let client = self.client
        stops.add(client) { client.shutdown() }
    }

    /// `/metrics` lines: attempts per sink and outcome, pending pushes, unhealthy sinks.
    static func metrics(_ pushes: Pushes, service: PushService?, into metrics: inout MetricsText) {
        guard pushes.isEnabled else { return }
        let outcomes: [PushAttempt.Outcome] = [.sent, .retrying, .failed, .retired, .skipped]
        let sinks = Set(["apns", "ntfy"]).union(pushes.counts.keys).sorted()
        metrics.add(
            "clawrelay_push_attempts_total",
            "counter",
            "Push send attempts by sink and outcome.",
            sinks.flatMap { sink in outcomes.map { ([("sink", sink), ("outcome", $0.rawValue)], Double(pushes.counts[sink]?[$0] ?? 0)) } }
        )
        metrics.add("clawrelay_push_pending", "gauge", "Pushes waiting for their delay or quiet hours.", Double(pushes.pendingCount))
        metrics.add("clawrelay_push_cancelled_total", "counter", "Pushes dropped because the user read or returned.", Double(pushes.cancelledCount))
        if let health = service?.health(), !health.isEmpty {
            metrics.add(
                "clawrelay_push_sink_healthy",
                "gauge",
                "1 while a sink works, 0 after a configuration error or a 410 from a webhook.",
                health.map { ([("sink", $0.sink)], $0.problem == nil ? 1 : 0) }
            )
        }
    }
}
