import Foundation
import Logging
import RelayCore

/// The core's `PushDispatcher`: hands each delivery to the sink of each of its targets and to
/// every webhook, on the push queue, and reports back on the loop once all are done.
///
/// All mutable state (the sinks' health, the APNs token cache) lives on `queue`.
public final class PushService: PushDispatcher {
    private let queue = PushQueue(queue: DispatchQueue(label: "clawrelay.push"))
    private let loop: any LoopExecutor
    private let sinks: [PushTarget.Kind: any PushSink]
    private let webhooks: [WebhookSink]
    private let logger: Logger

    /// Fails when the APNs key cannot be read or is not a P-256 key.
    public init(settings: PushSettings, http: any HTTPSending, loop: any LoopExecutor, clock: any Clock, logger: Logger) throws {
        self.loop = loop
        self.logger = logger
        let retry = RetryPolicy(tries: 3, baseMillis: settings.retryBaseMillis)
        var sinks: [PushTarget.Kind: any PushSink] = [:]
        if let apns = settings.apns {
            let pem = try String(contentsOfFile: apns.keyFile, encoding: .utf8)
            let token = try APNsToken(pem: pem, keyID: apns.keyID, teamID: apns.teamID, clock: clock)
            sinks[.apns] = APNsSink(settings: apns, token: token, http: http, queue: queue, retry: retry, clock: clock, logger: logger)
        }
        sinks[.ntfy] = NtfySink(serverURL: settings.ntfyURL, accessToken: settings.ntfyToken, http: http, queue: queue, retry: retry, clock: clock)
        self.sinks = sinks
        let queue = self.queue
        webhooks = settings.webhooks.map { WebhookSink(settings: $0, http: http, queue: queue, retry: retry, clock: clock, logger: logger) }
    }

    public func dispatch(_ delivery: PushDelivery, completion: @escaping (PushReport) -> Void) {
        let reply = LoopBound(completion, loop: loop)
        let loop = self.loop
        queue.run { [self] in
            var jobs: [(any PushSink, PushTarget?)] = delivery.device.targets.map { target in (sinks[target.kind], target) }.compactMap {
                sink,
                target in
                sink.map { ($0, target) }
            }
            jobs += webhooks.map { ($0, nil) }
            var report = PushReport()
            var left = jobs.count
            let finish = {
                let done = report
                loop.execute { reply.value(done) }
            }
            if jobs.isEmpty { return finish() }
            for (sink, target) in jobs {
                sink.send(delivery, to: target) { result in
                    report.attempts += result.attempts
                    if let target, let reason = result.retired { report.retired.append((target, reason)) }
                    left -= 1
                    if left == 0 { finish() }
                }
            }
        }
    }

    /// Every sink with a health state and, when it is unhealthy, why (for `/metrics`); blocks
    /// briefly on the push queue.
    public func health() -> [(sink: String, problem: String?)] {
        queue.queue.sync {
            var out: [(sink: String, problem: String?)] = []
            if let apns = sinks[.apns] as? APNsSink { out.append(("apns", apns.unhealthy)) }
            for webhook in webhooks { out.append((webhook.name, webhook.disabled ? "disabled after 410 Gone" : nil)) }
            return out
        }
    }
}
