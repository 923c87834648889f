import Foundation
import RelayCore
// The sinks speak in `HTTPRequest`s and `HTTPResponse`s: whoever wires them builds the client too.
@_exported import RelayHTTP

/// Sends one request; `HTTPClient` in the relay.
public protocol HTTPSending: Sendable {
    func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, HTTPFailure>) -> Void)
}

/// What one sink did with one delivery.
struct SinkResult: Sendable {
    var attempts: [PushAttempt] = []
    /// Set when the service declared the target dead.
    var retired: String?
}

/// One way to wake a device (APNs, ntfy) or to tell a system (a webhook).
///
/// - Important: called on the push queue; `done` must run exactly once, on the push queue.
protocol PushSink: AnyObject {
    /// `apns`, `ntfy`, `webhook:<host>`: the attempts' `sink`.
    var name: String { get }
    /// Sends to one target (nil for a sink that takes every delivery).
    func send(_ delivery: PushDelivery, to target: PushTarget?, done: @escaping (SinkResult) -> Void)
}

/// How a sink retries: `tries` attempts in all, waiting `base × 2ⁿ` with ±50 % jitter between.
struct RetryPolicy: Sendable {
    var tries = 3
    var backoff: Backoff

    init(tries: Int = 3, baseMillis: Int = 1_000) {
        self.tries = tries
        backoff = Backoff(minMillis: baseMillis, maxMillis: baseMillis << 10, spreadPercent: 50)
    }

    func delayMillis(afterTry attempt: Int) -> Int { backoff.delay(afterAttempt: attempt, random: Backoff.systemRandom) }
}

extension HTTPResponse {
    /// The JSON body's `reason` (APNs errors), or the status line's meaning.
    var reason: String {
        if let object = JSONValue.parse(body), let reason = object["reason"]?.stringValue { return reason }
        return status >= 200 && status < 300 ? "ok" : "HTTP \(status)"
    }

    var isSuccess: Bool { (200..<300).contains(status) }
    /// Worth trying again: throttled or a server error.
    var isTransient: Bool { status == 429 || status >= 500 }
}

/// The one serial queue every sink runs on, and the hops back onto it.
///
/// libcurl's completions and `asyncAfter` take `@Sendable` closures, so what a sink captures has
/// to cross them in an `OnPushQueue`: it is only ever used on this serial queue, never from two
/// threads at once.
struct PushQueue: Sendable {
    struct OnPushQueue<Value>: @unchecked Sendable {
        let value: Value
    }

    let queue: DispatchQueue

    func run(_ job: @escaping () -> Void) {
        let job = OnPushQueue(value: job)
        queue.async { job.value() }
    }

    func run(afterMillis millis: Int, _ job: @escaping () -> Void) {
        let job = OnPushQueue(value: job)
        queue.asyncAfter(deadline: .now() + .milliseconds(millis)) { job.value() }
    }

    /// Sends `request` and resumes with the answer on the queue.
    func send(_ request: HTTPRequest, via http: any HTTPSending, _ resume: @escaping (Result<HTTPResponse, HTTPFailure>) -> Void) {
        let resume = OnPushQueue(value: resume)
        let queue = self.queue
        http.send(request) { answer in queue.async { resume.value(answer) } }
    }
}
