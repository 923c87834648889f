import Foundation
import GatewayWire
import RelayCore

/// `agent.wait {runId, timeoutMs?}`: answers once the user's run ended (`ok`, `error`, or OpenClaw's
/// `timeout` with `stopReason: "aborted"` for an aborted run), or with `timeout` when it still
/// runs (or is unknown) after `timeoutMs`. A run that ended lately is answered at once from the
/// core's record of endings. Each socket waits on at most `maxWaitsPerSocket` runs at once, and its
/// waits go when it closes.
extension GatewayDownstream {
    /// The longest one `agent.wait` waits (a longer `timeoutMs` is clamped; clients ask again).
    static let maxAgentWaitMillis: Int64 = 600_000
    /// OpenClaw's default when `timeoutMs` is left out.
    static let defaultAgentWaitMillis: Int64 = 30_000
    static let maxWaitsPerSocket = 32
    static let maxRunIDBytes = 256

    func agentWait(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let fields = request.fields
        guard let runID = fields["runId"]?.stringValue?.trimmingCharacters(in: .whitespaces), !runID.isEmpty,
            runID.utf8.count <= Self.maxRunIDBytes
        else { return socket.fail(request.id, .runIDRequired) }
        var timeout = Self.defaultAgentWaitMillis
        if let given = fields["timeoutMs"] {
            guard let millis = given.intValue, millis >= 0 else { return socket.fail(request.id, .timeoutNotInteger) }
            timeout = min(millis, Self.maxAgentWaitMillis)
        }
        if let ending = hub.turns.ending(ofRun: runID, userID: settings.userID) {
            return socket.reply(request.id, Self.waitResult(ending))
        }
        guard timeout > 0 else { return socket.reply(request.id, AgentWaitResult.timeout(runID)) }
        guard socket.waits.count < Self.maxWaitsPerSocket else { return socket.fail(request.id, .tooManyWaits) }
        let turns = hub.turns
        socket.lastWait += 1
        let key = socket.lastWait
        let watch = turns.watch(runID: runID, userID: settings.userID) { [weak self, weak socket] end in
            guard let self, let wait = socket?.waits.removeValue(forKey: key) else { return }
            loop.cancel(wait.timer)
            socket?.reply(request.id, Self.waitResult(RunEnding(runID: runID, end)))
        }
        let timer = loop.schedule(afterMillis: Int(timeout)) { [weak socket, weak turns] in
            guard let wait = socket?.waits.removeValue(forKey: key) else { return }
            turns?.unwatch(wait.watch)
            socket?.reply(request.id, AgentWaitResult.timeout(runID))
        }
        socket.waits[key] = (watch, timer)
    }

    /// The socket closed: its waits end unanswered and let go of what they hold.
    func releaseWaits(of socket: GatewaySocket) {
        for wait in socket.waits.values {
            loop.cancel(wait.timer)
            hub.turns.unwatch(wait.watch)
        }
        socket.waits = [:]
    }

    /// How `agent.wait` reports a run that ended.
    static func waitResult(_ ending: RunEnding) -> AgentWaitResult {
        let runID = ending.runID
        switch ending.outcome {
        case .answered:
            return AgentWaitResult(runId: runID, status: "ok", endedAt: ending.endedAt)
        case .failed(let failure) where failure.cause == .aborted:
            return AgentWaitResult(runId: runID, status: "timeout", endedAt: ending.endedAt, error: "aborted", stopReason: "aborted")
        case .failed(let failure):
            return AgentWaitResult(runId: runID, status: "error", endedAt: ending.endedAt, error: failure.shown)
        }
    }
}
