import Foundation
import Logging
import RelayCore
import RelayTransport

/// A backend that is an operator account on an OpenClaw gateway (a real one, or another relay).
///
/// Each user turn becomes a `chat.send`; the gateway's `chat` events become turn events.
public final class OpenClawBackend: Backend {
    public let name: String
    private let loop: ServiceLoop
    private let runs: LoopBound<OperatorRuns>

    /// Loop thread (the link schedules timers and connects from there).
    public init(
        name: String,
        target: ServiceLoop.ClientTarget,
        sessionKey: String?,
        accountsDirectory: String,
        loop: ServiceLoop,
        logger: Logger,
        onState: @escaping (LinkState, String) -> Void
    ) throws {
        self.name = name
        self.loop = loop
        let identity = try AccountIdentity(directory: accountsDirectory, account: name)
        let link = GatewayLink(
            name: name,
            target: target,
            identity: identity,
            connector: loop,
            logger: logger,
            onState: onState
        )
        runs = LoopBound(OperatorRuns(link: link, sessionKey: sessionKey), loop: loop)
    }

    /// Opens the link; it heals itself from then on. Loop thread.
    public func connect() { runs.value.link.connect() }

    public func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnCancellation {
        let runID = Identifiers.newUUID()
        let runs = self.runs
        if loop.isOnLoop {
            runs.value.start(turn, runID: runID, events: events)
        } else {
            loop.execute { runs.value.start(turn, runID: runID, events: events) }
        }
        return TurnCancellation { [loop] in loop.execute { runs.value.cancel(runID) } }
    }
}

/// The chat runs of one operator account: `chat.send` per turn, `chat` events back to the turn.
///
/// - Important: loop thread only.
final class OperatorRuns {
    private struct Run {
        var sessionKey: String
        var events: @Sendable (TurnEvent) -> Void
    }

    let link: GatewayLink
    private let sessionKey: String?
    private var runs: [String: Run] = [:]

    init(link: GatewayLink, sessionKey: String?) {
        self.link = link
        self.sessionKey = sessionKey
        link.onEvent = { [weak self] name, payload in
            if name == "chat" { self?.chatEvent(payload) }
        }
        link.onDown = { [weak self] in
            guard let self else { return }
            for (_, run) in runs { run.events(.failed("the link to \(link.name) dropped")) }
            runs.removeAll()
        }
    }

    func start(_ turn: TurnRequest, runID: String, events: @escaping @Sendable (TurnEvent) -> Void) {
        guard link.isReady else { return events(.failed("the link to \(link.name) is \(link.state.rawValue)")) }
        let key = sessionKey ?? "relay:\(turn.userID):\(turn.conversationID)"
        runs[runID] = Run(sessionKey: key, events: events)
        events(.typing(true))
        link.request("chat.send", .object(["sessionKey": .string(key), "message": .string(turn.text), "idempotencyKey": .string(runID)])) {
            [weak self] response in
            guard let self, response["ok"]?.boolValue != true, let run = runs.removeValue(forKey: runID) else { return }
            run.events(.failed(response["error"]?["message"]?.stringValue ?? "chat.send refused"))
        }
    }

    func cancel(_ runID: String) {
        guard let run = runs.removeValue(forKey: runID), link.isReady else { return }
        link.request("chat.abort", .object(["sessionKey": .string(run.sessionKey), "runId": .string(runID)])) { _ in }
    }

    private func chatEvent(_ payload: JSONValue) {
        guard let runID = payload["runId"]?.stringValue, let run = runs[runID] else { return }
        let text = payload["message"]?["content"]?.arrayValue?.compactMap { $0["text"]?.stringValue }.joined() ?? ""
        switch payload["state"]?.stringValue {
        case "delta": run.events(.progress(text))
        case "final":
            runs.removeValue(forKey: runID)
            run.events(.final(text))
        case "error":
            runs.removeValue(forKey: runID)
            run.events(.failed(payload["errorMessage"]?.stringValue ?? "upstream error"))
        case "aborted":
            runs.removeValue(forKey: runID)
            run.events(.failed("aborted upstream"))
        default: break
        }
    }
}
