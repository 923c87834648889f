import Crypto
import Foundation
import Logging
import RelayCore
import RelayPush
import Synchronization
import Testing

/// An HTTP "server" answering from a script, recording every request.
final class ScriptedHTTP: HTTPSending {
    private let state = Mutex<(script: [Result<HTTPResponse, HTTPFailure>], requests: [HTTPRequest])>(([], []))

    init(_ script: [Result<HTTPResponse, HTTPFailure>]) { state.withLock { $0.script = script } }

    static func answer(_ status: Int, _ json: String = "") -> Result<HTTPResponse, HTTPFailure> {
        .success(HTTPResponse(status: status, headers: [:], body: Array(json.utf8), httpVersion: 2))
    }

    var requests: [HTTPRequest] { state.withLock { $0.requests } }

    func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, HTTPFailure>) -> Void) {
        let answer = state.withLock { state -> Result<HTTPResponse, HTTPFailure> in
            state.requests.append(request)
            return state.script.isEmpty ? Self.answer(200) : state.script.removeFirst()
        }
        DispatchQueue.global().async { completion(answer) }
    }
}

/// Runs completions wherever they are posted: the test waits for them.
struct ImmediateExecutor: LoopExecutor {
    var isOnLoop: Bool { true }
    func execute(_ job: @escaping @Sendable () -> Void) { job() }
}

@Suite final class PushServiceTests {
    static let key = P256.Signing.PrivateKey()
    let clock = TestClock(startMillis: 1_800_000_000_000)
    let keyFile: String

    init() throws {
        keyFile = NSTemporaryDirectory() + "push-test-\(UUID().uuidString).p8"
        try Self.key.pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
    }

    deinit { try? FileManager.default.removeItem(atPath: keyFile) }

    func service(_ http: ScriptedHTTP, webhooks: [PushSettings.Webhook] = []) throws -> PushService {
        var settings = PushSettings()
        settings.apns = PushSettings.APNs(
            keyFile: keyFile,
            keyID: "KEY1234567",
            teamID: "TEAM123456",
            topic: "com.example.app",
            endpoint: "https://apns.test"
        )
        settings.retryBaseMillis = 1
        settings.webhooks = webhooks
        return try PushService(settings: settings, http: http, loop: ImmediateExecutor(), clock: clock, logger: Logger(label: "test"))
    }

    func delivery(_ targets: [PushTarget], body: String = "hello") -> PushDelivery {
        let push = PendingPush(
            id: "0b7d3f4e-1c2a-4e5f-8a9b-0c1d2e3f4a5b",
            deviceID: "phone",
            userID: "u1",
            conversationID: "cv_1",
            count: 1,
            lastSeq: 9,
            failed: false,
            text: body,
            runMillis: 0,
            createdAt: clock.nowMillis(),
            dueAt: clock.nowMillis()
        )
        let device = PushDevice(deviceID: "phone", userID: "u1", protocolName: "test", targets: targets)
        return PushDelivery(push: push, device: device, content: PushContent(title: "echo", body: body, threadID: "cv_1"))
    }

    func apnsTarget(registeredAt: Int64 = 0) -> PushTarget {
        PushTarget(deviceID: "phone", kind: .apns, token: String(repeating: "a1", count: 32), registeredAt: registeredAt)
    }

    func send(_ service: PushService, _ delivery: PushDelivery) async -> PushReport {
        await withCheckedContinuation { continuation in
            let once = Mutex(false)
            service.dispatch(delivery) { report in
                guard
                    once.withLock({ done in
                        defer { done = true }
                        return !done
                    })
                else { return }
                continuation.resume(returning: LoopBound(report, loop: ImmediateExecutor()).value)
            }
        }
    }

    @Test func aSentPushHasApplesHeadersAndPath() async throws {
        let http = ScriptedHTTP([ScriptedHTTP.answer(200)])
        let report = await send(try service(http), delivery([apnsTarget()]))
        #expect(report.attempts.map(\.outcome) == [.sent])
        let request = try #require(http.requests.first)
        #expect(request.url == "https://apns.test/3/device/" + String(repeating: "a1", count: 32))
        let headers = Dictionary(request.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
        #expect(headers["apns-topic"] == "com.example.app" && headers["apns-push-type"] == "alert" && headers["apns-priority"] == "10")
        #expect(headers["apns-collapse-id"] == "cv_1" && headers["apns-id"] == "0b7d3f4e-1c2a-4e5f-8a9b-0c1d2e3f4a5b")
        #expect(headers["apns-expiration"] == "\(1_800_000_000 + 86_400)")
        #expect(headers["authorization"]?.hasPrefix("bearer ey") == true)
        let payload = try #require(JSONValue.parse(request.body))
        #expect(payload["aps"]?["alert"]?["body"]?.stringValue == "hello")
        #expect(payload["aps"]?["thread-id"]?.stringValue == "cv_1")
        #expect(report.attempts.first?.target == "apns:…a1a1", "tokens are redacted in attempts")
    }

    @Test func badDeviceTokenRetiresAndAnOlderUnregisteredKeeps() async throws {
        let retire = await send(try service(ScriptedHTTP([ScriptedHTTP.answer(400, #"{"reason":"BadDeviceToken"}"#)])), delivery([apnsTarget()]))
        #expect(retire.retired.map(\.reason) == ["BadDeviceToken"] && retire.attempts.map(\.outcome) == [.retired])
        let gone = ScriptedHTTP([ScriptedHTTP.answer(410, #"{"reason":"Unregistered","timestamp":1000}"#)])
        #expect(await send(try service(gone), delivery([apnsTarget(registeredAt: 500)])).retired.count == 1)
        let reRegistered = ScriptedHTTP([ScriptedHTTP.answer(410, #"{"reason":"Unregistered","timestamp":1000}"#)])
        let kept = await send(try service(reRegistered), delivery([apnsTarget(registeredAt: 2000)]))
        #expect(kept.retired.isEmpty && kept.attempts.map(\.outcome) == [.failed])
    }

    @Test func throttlingAndServerErrorsAreTriedThreeTimes() async throws {
        let http = ScriptedHTTP([
            ScriptedHTTP.answer(429, #"{"reason":"TooManyRequests"}"#), ScriptedHTTP.answer(500), .failure(.transport("timeout")),
        ])
        let report = await send(try service(http), delivery([apnsTarget()]))
        #expect(report.attempts.map(\.outcome) == [.retrying, .retrying, .failed])
        #expect(report.attempts.map(\.status) == [429, 500, 0])
        #expect(http.requests.count == 3)
    }

    @Test func anExpiredProviderTokenIsReMintedOnce() async throws {
        let expired = ScriptedHTTP.answer(403, #"{"reason":"ExpiredProviderToken"}"#)
        let http = ScriptedHTTP([expired, expired])
        let report = await send(try service(http), delivery([apnsTarget()]))
        #expect(report.attempts.map(\.outcome) == [.retrying, .failed])
        let tokens = http.requests.compactMap { request in request.headers.first { $0.name == "authorization" }?.value }
        #expect(tokens.count == 2, "one retry, no loop")
    }

    @Test func aConfigurationErrorMakesAPNsUnhealthyWithoutRetries() async throws {
        let http = ScriptedHTTP([ScriptedHTTP.answer(400, #"{"reason":"DeviceTokenNotForTopic"}"#)])
        let service = try service(http)
        #expect(await send(service, delivery([apnsTarget()])).attempts.map(\.outcome) == [.failed])
        let second = await send(service, delivery([apnsTarget()]))
        #expect(second.attempts.map(\.outcome) == [.skipped] && http.requests.count == 1)
        #expect(service.health().first { $0.sink == "apns" }?.problem == "DeviceTokenNotForTopic")
    }

    @Test func payloadTooLargeShortensTheBody() async throws {
        let http = ScriptedHTTP([ScriptedHTTP.answer(413, #"{"reason":"PayloadTooLarge"}"#), ScriptedHTTP.answer(200)])
        let report = await send(try service(http), delivery([apnsTarget()], body: String(repeating: "x", count: 400)))
        #expect(report.attempts.map(\.outcome) == [.retrying, .sent])
        let bodies = http.requests.map { JSONValue.parse($0.body)?["aps"]?["alert"]?["body"]?.stringValue?.count ?? 0 }
        #expect(bodies[1] < bodies[0])
    }

    @Test func webhooksAreSignedAndA410DisablesThem() async throws {
        let secret = "0123456789abcdef"
        let http = ScriptedHTTP([ScriptedHTTP.answer(410)])
        let service = try service(http, webhooks: [PushSettings.Webhook(url: "https://hooks.test/x", secret: secret)])
        let first = await send(service, delivery([]))
        #expect(first.attempts.map(\.outcome) == [.failed] && first.attempts.first?.sink == "webhook:hooks.test")
        let request = try #require(http.requests.first)
        let headers = Dictionary(request.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
        let timestamp = try #require(headers["X-ClawRelay-Timestamp"])
        let mac = HMAC<SHA256>.authenticationCode(for: Array("\(timestamp).".utf8) + request.body, using: SymmetricKey(data: Array(secret.utf8)))
        #expect(headers["X-ClawRelay-Signature"] == "sha256=" + mac.map { String(format: "%02x", $0) }.joined())
        let body = try #require(JSONValue.parse(request.body))
        #expect(body["event"]?.stringValue == "turn.final" && body["device"]?.stringValue == "phone" && body["seq"]?.intValue == 9)
        let second = await send(service, delivery([]))
        #expect(second.attempts.map(\.outcome) == [.skipped] && http.requests.count == 1, "disabled after 410")
    }

    @Test func ntfyPostsTheTextWithItsHeaders() async throws {
        let http = ScriptedHTTP([ScriptedHTTP.answer(503), ScriptedHTTP.answer(200)])
        let target = PushTarget(deviceID: "phone", kind: .ntfy, token: "my-topic", registeredAt: 0)
        let report = await send(try service(http), delivery([target]))
        #expect(report.attempts.map(\.outcome) == [.retrying, .sent])
        let request = try #require(http.requests.last)
        #expect(request.url == "https://ntfy.sh/my-topic" && String(decoding: request.body, as: UTF8.self) == "hello")
        #expect(request.headers.contains { $0 == ("Title", "echo") } && request.headers.contains { $0.name == "Priority" })
        #expect(!request.headers.contains { $0.name == "Authorization" }, "no token configured")
    }

    @Test func aSilentPushIsABackgroundPushToAPNsAndNothingToNtfy() async throws {
        let http = ScriptedHTTP([ScriptedHTTP.answer(200)])
        var silent = delivery([apnsTarget(), PushTarget(deviceID: "phone", kind: .ntfy, token: "my-topic", registeredAt: 0)])
        silent.content = PushContent(
            title: "",
            body: "",
            threadID: "cv_1",
            custom: ["openclaw": .object(["kind": .string("exec.approval.resolved")])],
            silent: true
        )
        let report = await send(try service(http), silent)
        #expect(report.attempts.map(\.outcome) == [.sent], "ntfy has no silent push: nothing is posted there")
        let request = try #require(http.requests.first)
        let headers = Dictionary(request.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
        #expect(headers["apns-push-type"] == "background" && headers["apns-priority"] == "5")
        let payload = try #require(JSONValue.parse(request.body))
        #expect(payload["aps"] == .object(["content-available": .int(1)]))
        #expect(payload["openclaw"]?["kind"]?.stringValue == "exec.approval.resolved")
    }

    @Test func anApprovalAlertCarriesItsCategoryAndWakesTheApp() async throws {
        let http = ScriptedHTTP([ScriptedHTTP.answer(200)])
        var alert = delivery([apnsTarget()])
        alert.content.category = "openclaw.exec-approval"
        alert.content.wakesApp = true
        _ = await send(try service(http), alert)
        let request = try #require(http.requests.first)
        let payload = try #require(JSONValue.parse(request.body))
        #expect(payload["aps"]?["category"]?.stringValue == "openclaw.exec-approval" && payload["aps"]?["content-available"]?.intValue == 1)
    }
}
