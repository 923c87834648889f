import Crypto
import Foundation
import Logging
import RelayCore
import RelayHTTP

/// What the plain-HTTP sinks share: one POST per delivery, 2xx done, 429/5xx and transport
/// errors retried with back-off, anything else given up.
///
/// - Important: push queue only.
class HTTPPostSink {
    let http: any HTTPSending
    let queue: PushQueue
    let retry: RetryPolicy
    let clock: any Clock

    init(http: any HTTPSending, queue: PushQueue, retry: RetryPolicy, clock: any Clock) {
        self.http = http
        self.queue = queue
        self.retry = retry
        self.clock = clock
    }

    /// Posts `request()` (rebuilt per try) and reports every try; `verdict` may override how a
    /// response ends (a webhook's 410).
    func post(
        _ request: @escaping () -> HTTPRequest,
        base: PushAttempt,
        number: Int = 1,
        result: SinkResult = SinkResult(),
        verdict: @escaping (HTTPResponse) -> (PushAttempt.Outcome, String)? = { _ in nil },
        done: @escaping (SinkResult) -> Void
    ) {
        queue.send(request(), via: http) { [self] answer in
            var result = result
            var attempt = base
            attempt.timeMillis = clock.nowMillis()
            let transient: Bool
            switch answer {
            case .failure(let failure):
                (attempt.status, attempt.reason, transient) = (0, "\(failure)", true)
                attempt.outcome = .failed
            case .success(let response):
                (attempt.status, attempt.reason, transient) = (response.status, response.reason, response.isTransient)
                attempt.outcome = response.isSuccess ? .sent : .failed
                if let (outcome, reason) = verdict(response) { (attempt.outcome, attempt.reason) = (outcome, reason) }
            }
            guard attempt.outcome == .failed, transient, number < retry.tries else {
                result.attempts.append(attempt)
                return done(result)
            }
            attempt.outcome = .retrying
            result.attempts.append(attempt)
            let soFar = result
            queue.run(afterMillis: retry.delayMillis(afterTry: number)) { [self] in
                post(request, base: base, number: number + 1, result: soFar, verdict: verdict, done: done)
            }
        }
    }

    func attempt(_ delivery: PushDelivery, sink: String, target: String) -> PushAttempt {
        PushAttempt(
            timeMillis: clock.nowMillis(),
            deviceID: delivery.push.deviceID,
            conversationID: delivery.push.conversationID,
            sink: sink,
            target: target,
            status: 0,
            outcome: .failed,
            reason: ""
        )
    }
}

/// ntfy: the text POSTed to the device's topic URL with `Title`, `Click`, `Priority`, `Tags`.
final class NtfySink: HTTPPostSink, PushSink {
    let name = "ntfy"
    private let serverURL: String
    private let accessToken: String?

    init(serverURL: String, accessToken: String?, http: any HTTPSending, queue: PushQueue, retry: RetryPolicy, clock: any Clock) {
        self.serverURL = serverURL.hasSuffix("/") ? String(serverURL.dropLast()) : serverURL
        self.accessToken = accessToken
        super.init(http: http, queue: queue, retry: retry, clock: clock)
    }

    /// A device's target as given to `clawrelay devices push --ntfy`: a URL, or a topic on the server.
    static func topicURL(_ target: String, server: String) -> String {
        target.hasPrefix("http://") || target.hasPrefix("https://") ? target : server + "/" + target
    }

    func send(_ delivery: PushDelivery, to target: PushTarget?, done: @escaping (SinkResult) -> Void) {
        // ntfy has no silent push: a resolved approval's alert stays until the user opens it.
        guard let target, !delivery.content.silent else { return done(SinkResult()) }
        let url = Self.topicURL(target.token, server: serverURL)
        let content = delivery.content
        // Header values cannot hold line breaks; ntfy reads UTF-8 in them.
        let title = content.title.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        var headers: [(name: String, value: String)] = [
            ("Title", title), ("Priority", delivery.push.failed ? "high" : "default"), ("Tags", delivery.push.failed ? "warning" : "robot"),
            ("Content-Type", "text/plain; charset=utf-8"),
        ]
        if let link = content.link { headers.append(("Click", link)) }
        if let accessToken, url.hasPrefix(serverURL + "/") { headers.append(("Authorization", "Bearer " + accessToken)) }
        let body = Array(content.body.utf8)
        post({ HTTPRequest(url: url, headers: headers, body: body) }, base: attempt(delivery, sink: name, target: target.redacted), done: done)
    }
}

/// A webhook: every push as signed JSON. 410 Gone turns it off until the relay restarts.
final class WebhookSink: HTTPPostSink, PushSink {
    let name: String
    private let settings: PushSettings.Webhook
    private let logger: Logger
    private(set) var disabled = false

    init(settings: PushSettings.Webhook, http: any HTTPSending, queue: PushQueue, retry: RetryPolicy, clock: any Clock, logger: Logger) {
        self.settings = settings
        name = "webhook:" + (PushTarget.origin(of: settings.url) ?? "?")
        self.logger = logger
        super.init(http: http, queue: queue, retry: retry, clock: clock)
    }

    /// `sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`.
    static func signature(secret: String, timestamp: Int64, body: [UInt8]) -> String {
        var message = Array("\(timestamp).".utf8)
        message += body
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Array(secret.utf8)))
        return "sha256=" + mac.map { String(format: "%02x", $0) }.joined()
    }

    func send(_ delivery: PushDelivery, to target: PushTarget?, done: @escaping (SinkResult) -> Void) {
        let base = attempt(delivery, sink: name, target: name)
        if disabled {
            var result = SinkResult()
            var skipped = base
            (skipped.outcome, skipped.reason) = (.skipped, "disabled after 410 Gone")
            result.attempts.append(skipped)
            return done(result)
        }
        let push = delivery.push
        var fields: [String: JSONValue] = [
            "event": .string(push.eventName), "user": .string(push.userID), "device": .string(push.deviceID),
            "conversation": .string(push.conversationID), "title": .string(delivery.content.title), "body": .string(delivery.content.body),
            "seq": .int(push.lastSeq), "count": .int(Int64(push.count)), "ts": .int(clock.nowMillis() / 1000),
        ]
        if let approval = push.approval {
            fields["approval"] = .object(["id": .string(approval.id), "tool": .string(approval.toolName), "summary": .string(approval.summary)])
        }
        let body = Array(JSONValue.object(fields).encoded().utf8)
        let (url, secret, clock) = (settings.url, settings.secret, self.clock)
        let request = {
            // Signed per try: the timestamp is the send's, so a receiver's freshness window holds.
            let timestamp = clock.nowMillis() / 1000
            return HTTPRequest(
                url: url,
                headers: [
                    ("Content-Type", "application/json"), ("X-ClawRelay-Timestamp", "\(timestamp)"),
                    ("X-ClawRelay-Signature", Self.signature(secret: secret, timestamp: timestamp, body: body)),
                ],
                body: body
            )
        }
        post(
            request,
            base: base,
            verdict: { [self] response in
                guard response.status == 410 else { return nil }
                if !disabled {
                    disabled = true
                    logger.warning("webhook answered 410 Gone; disabled until the relay restarts", metadata: ["webhook": "\(name)"])
                }
                return (.failed, "410 Gone: disabled")
            },
            done: done
        )
    }
}
