import Foundation
import GatewayClient
import GatewayWire
import Logging
import RelayKit
import RelayTransport

/// `clawrelay chat`'s connection: an operator on a gateway listener (the relay's, or a real
/// OpenClaw gateway), offering protocol 3..4, with its own Ed25519 identity. Pairing, reconnects
/// and the device token are `GatewayLink`'s; this adds the chat calls a client makes.
///
/// - Important: loop thread only.
public final class OperatorClient {
    /// A chat run's events as the client shows them.
    public enum RunEvent: Equatable, Sendable {
        /// The whole answer so far.
        case progress(String)
        /// The answer, with its place on the user's clock when the gateway gives one (what
        /// `sessions.markRead` takes).
        case final(String, seq: Int64?)
        /// The run ended without an answer (error, abort, a refused `chat.send`, a dropped link),
        /// in a sentence: the gateway's reason ("the assistant failed to answer: …") where it gave one.
        case failed(String)
    }

    private let link: GatewayLink
    private var runs: [String: (RunEvent) -> Void] = [:]
    /// Every event, for the screen (`sessions.changed`, `tick`, `chat` events of every run), except
    /// how a run of this client ended without an answer: its `events` hear that, once.
    public var onEvent: ((GatewayEvent<JSONValue>) -> Void)?

    /// Longest wait between tries while the link is down or awaiting approval: a person is waiting.
    public static let maxRetryMillis = 3_000

    public init(
        target: ServiceLoop.ClientTarget,
        identity: AccountIdentity,
        loop: ServiceLoop,
        logger: Logger,
        onState: @escaping (LinkState, String) -> Void
    ) {
        link = GatewayLink(
            name: "chat",
            target: target,
            identity: identity,
            connector: loop,
            logger: logger,
            hello: .operatorClient(displayName: "clawrelay chat"),
            maxBackoffMillis: Self.maxRetryMillis,
            onState: onState
        )
        link.onEvent = { [weak self] event in self?.handle(event) }
        link.onDown = { [weak self] in self?.dropRuns() }
    }

    public var deviceID: String { link.deviceID }
    public var isReady: Bool { link.isReady }

    public func connect() { link.connect() }
    public func stop() { link.stop() }

    /// Sends a request; `completion` gets `payload` on `ok:true`, else the error's message.
    public func call<Params: Codable & Equatable & Sendable>(
        _ method: String,
        _ params: Params = NoParams(),
        completion: @escaping (Result<JSONValue, OperatorError>) -> Void
    ) {
        link.request(method, params) { response in
            if response.ok { return completion(.success(response.payload ?? .null)) }
            let code = response.error.map(\.code.rawValue).flatMap { $0.isEmpty ? nil : $0 } ?? "ERROR"
            completion(.failure(OperatorError(code: code, message: response.error?.message ?? "\(response)")))
        }
    }

    /// `chat.send` to the session `key` (`runID` is the idempotency key: a retry with it is the
    /// same run); `events` hears the run's progress and its end.
    public func send(_ text: String, to key: String, runID: String = Identifiers.newUUID(), events: @escaping (RunEvent) -> Void) {
        runs[runID] = events
        call("chat.send", ChatSendParams(sessionKey: key, message: text, idempotencyKey: runID)) { [weak self] result in
            if case .failure(let error) = result {
                self?.runs.removeValue(forKey: runID)?(.failed("the relay refused the message: \(error.message)"))
            }
        }
    }

    private func handle(_ event: GatewayEvent<JSONValue>) {
        guard event.event == "chat", let payload = event.payload.flatMap({ GatewayJSON.decode(ChatEventPayload.self, from: $0) }),
            let runID = payload.runId, let events = runs[runID]
        else {
            onEvent?(event)
            return
        }
        let text = payload.message?.text ?? ""
        switch payload.state {
        case "delta": events(.progress(text))
        case "final":
            runs.removeValue(forKey: runID)
            events(.final(text, seq: payload.message?.seq))
        case "aborted":
            runs.removeValue(forKey: runID)
            return events(.failed("the answer was aborted"))
        default:
            runs.removeValue(forKey: runID)
            return events(.failed(payload.errorMessage ?? "the assistant failed to answer"))
        }
        onEvent?(event)
    }

    /// The link dropped: runs waiting on it will not hear their end on this connection.
    private func dropRuns() {
        let waiting = runs
        runs.removeAll()
        for events in waiting.values { events(.failed("the connection to the relay dropped")) }
    }
}

/// A gateway error answer, readable.
public struct OperatorError: Error, Sendable, CustomStringConvertible {
    public var code: String
    public var message: String

    public var description: String { "\(code): \(message)" }
}
