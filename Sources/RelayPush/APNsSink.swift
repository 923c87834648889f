import Foundation
import Logging
import RelayCore
import RelayHTTP

/// APNs over HTTP/2 with token auth: `POST /3/device/<token>` per target, one provider token
/// reused for 50 minutes, Apple's answers turned into retire / retry / configuration error.
///
/// - Important: push queue only.
final class APNsSink: PushSink {
    let name = "apns"
    private let settings: PushSettings.APNs
    private let token: APNsToken
    private let http: any HTTPSending
    private let queue: PushQueue
    private let retry: RetryPolicy
    private let clock: any Clock
    private let logger: Logger
    /// Set by a configuration error (wrong key, topic): nothing is sent until the relay restarts
    /// with a fixed configuration.
    private(set) var unhealthy: String?

    /// Seconds APNs keeps trying to deliver to an offline device.
    static let expirationSeconds: Int64 = 86_400
    static let configurationErrors: Set<String> = [
        "DeviceTokenNotForTopic", "TopicDisallowed", "InvalidProviderToken", "MissingProviderToken", "BadTopic", "MissingTopic",
        "BadCertificate", "BadCertificateEnvironment", "Forbidden",
    ]

    init(settings: PushSettings.APNs, token: APNsToken, http: any HTTPSending, queue: PushQueue, retry: RetryPolicy, clock: any Clock, logger: Logger)
    {
        self.settings = settings
        self.token = token
        self.http = http
        self.queue = queue
        self.retry = retry
        self.clock = clock
        self.logger = logger
    }

    func send(_ delivery: PushDelivery, to target: PushTarget?, done: @escaping (SinkResult) -> Void) {
        guard let target else { return done(SinkResult()) }
        var result = SinkResult()
        let base = PushAttempt(
            timeMillis: clock.nowMillis(),
            deviceID: target.deviceID,
            conversationID: delivery.push.conversationID,
            sink: name,
            target: target.redacted,
            status: 0,
            outcome: .skipped,
            reason: ""
        )
        if let unhealthy {
            result.attempts.append(with(base, status: 0, .skipped, "APNs is misconfigured: \(unhealthy)"))
            return done(result)
        }
        attempt(1, delivery, target, body: delivery.content.body, reminted: false, result: result, base: base, done: done)
    }

    private func attempt(
        _ number: Int,
        _ delivery: PushDelivery,
        _ target: PushTarget,
        body: String,
        reminted: Bool,
        result: SinkResult,
        base: PushAttempt,
        done: @escaping (SinkResult) -> Void
    ) {
        var result = result
        let content = delivery.content
        let built =
            content.silent
            ? APNsPayload.background(custom: content.custom)
            : APNsPayload.alert(
                title: content.title,
                body: body,
                threadID: content.threadID,
                subtitle: content.subtitle,
                category: content.category,
                wakesApp: content.wakesApp,
                custom: content.custom
            )
        guard let payload = built else {
            result.attempts.append(with(base, status: 0, .failed, "the payload's custom fields alone exceed 4096 bytes"))
            return done(result)
        }
        let jwt: String
        do {
            jwt = try token.current()
        } catch {
            markUnhealthy("the provider token cannot be signed: \(error)")
            result.attempts.append(with(base, status: 0, .failed, "cannot sign the provider token"))
            return done(result)
        }
        var headers = [
            ("authorization", "bearer " + jwt), ("apns-topic", settings.topic),
            ("apns-push-type", content.silent ? "background" : "alert"), ("apns-priority", content.silent ? "5" : "10"),
            ("apns-expiration", "\(clock.nowMillis() / 1000 + Self.expirationSeconds)"),
            ("apns-id", delivery.push.id), ("content-type", "application/json"),
        ]
        if content.collapses { headers.append(("apns-collapse-id", Self.collapseID(delivery.push.approval?.id ?? delivery.push.conversationID))) }
        let request = HTTPRequest(url: settings.endpoint + "/3/device/" + target.token, headers: headers, body: Array(payload.utf8))
        queue.send(request, via: http) { [self] answer in
            handle(answer, number, delivery, target, body: body, reminted: reminted, result: result, base: base, done: done)
        }
    }

    private func handle(
        _ answer: Result<HTTPResponse, HTTPFailure>,
        _ number: Int,
        _ delivery: PushDelivery,
        _ target: PushTarget,
        body: String,
        reminted: Bool,
        result: SinkResult,
        base: PushAttempt,
        done: @escaping (SinkResult) -> Void
    ) {
        var result = result
        /// Records this try and goes on with the next, at once or after the back-off.
        func again(_ status: Int, _ reason: String, body: String = body, reminted: Bool = reminted, backOff: Bool) {
            result.attempts.append(with(base, status: status, .retrying, reason))
            let soFar = result
            let next = { [self] in attempt(number + 1, delivery, target, body: body, reminted: reminted, result: soFar, base: base, done: done) }
            if backOff { queue.run(afterMillis: retry.delayMillis(afterTry: number), next) } else { next() }
        }
        func end(_ status: Int, _ outcome: PushAttempt.Outcome, _ reason: String) {
            result.attempts.append(with(base, status: status, outcome, reason))
            if outcome == .retired { result.retired = reason }
            done(result)
        }
        let response: HTTPResponse
        switch answer {
        case .failure(let failure):
            return number < retry.tries ? again(0, "\(failure)", backOff: true) : end(0, .failed, "\(failure)")
        case .success(let answered):
            response = answered
        }
        let reason = response.reason
        switch (response.status, reason) {
        case (200..<300, _):
            end(response.status, .sent, "ok")
        case (400, "BadDeviceToken"), (410, _):
            // 410 says when Apple learned the token was dead: a registration after that is a new token.
            if let unregisteredAt = JSONValue.parse(response.body)?["timestamp"]?.intValue, unregisteredAt < target.registeredAt {
                return end(response.status, .failed, "\(reason) before the token was registered again; kept")
            }
            end(response.status, .retired, reason)
        case (403, "ExpiredProviderToken") where !reminted:
            token.invalidate()
            again(response.status, reason, reminted: true, backOff: false)
        case (413, _) where body.count > 16 && number < retry.tries:
            again(response.status, "\(reason); shortening the body", body: String(body.prefix(body.count / 2)) + "…", backOff: false)
        case (_, let reason) where Self.configurationErrors.contains(reason):
            markUnhealthy(reason)
            end(response.status, .failed, reason)
        case _ where response.isTransient && number < retry.tries:
            again(response.status, reason, backOff: true)
        default:
            end(response.status, .failed, reason)
        }
    }

    /// APNs takes at most 64 bytes: a longer conversation id collapses by its digest.
    static func collapseID(_ conversationID: String) -> String {
        conversationID.utf8.count <= 64 ? conversationID : Digest.sha256Hex(conversationID.utf8)
    }

    private func markUnhealthy(_ reason: String) {
        guard unhealthy == nil else { return }
        unhealthy = reason
        logger.error(
            "APNs refused the relay's configuration; no APNs pushes until it is fixed and the relay restarted",
            metadata: ["reason": "\(reason)", "topic": "\(settings.topic)", "key_id": "\(settings.keyID)", "endpoint": "\(settings.endpoint)"]
        )
    }

    private func with(_ base: PushAttempt, status: Int, _ outcome: PushAttempt.Outcome, _ reason: String) -> PushAttempt {
        var attempt = base
        attempt.timeMillis = clock.nowMillis()
        attempt.status = status
        attempt.outcome = outcome
        attempt.reason = reason
        return attempt
    }
}
