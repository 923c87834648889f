import RelayCore
import RelayTransport

/// A chat run as operators are shown it: its `chat` event count and the delta throttle. One per
/// run, shared by every operator socket, so each event is built and encoded once.
final class ChatRunView {
    var seq: Int64 = 0
    var lastDeltaAt: Int64 = 0
    var deltaTimer: TimerID?
    var latest: TurnProgress?
    /// The text the last delta showed, for v4's `deltaText`.
    var shown = ""
}

/// A run as operators' `agent` events show it, from its start to its end.
///
/// Its frames are numbered twice: every socket that takes the tool stream sees all of them, the
/// others all but the tool frames, so each kind of socket counts 1, 2, 3, … without a gap, and
/// every socket of a kind agrees on the numbers.
final class AgentRunView {
    let startedAt: Int64
    let sessionKey: String
    /// The last seq sent to sockets that take the tool stream, and to those that do not.
    var seqWithTools: Int64 = 0
    var seqWithoutTools: Int64 = 0
    /// The answer as the assistant stream last showed it.
    var text = ""

    init(startedAt: Int64, sessionKey: String) {
        self.startedAt = startedAt
        self.sessionKey = sessionKey
    }
}

/// The runs operators are being shown, and the last core event encoded for them (the bus hands
/// the same event to every socket in turn: the first that reads chat builds what it shows).
final class GatewayChatRuns {
    var views: [String: ChatRunView] = [:]
    /// Runs whose `agent` lifecycle started and did not end yet.
    var agents: [String: AgentRunView] = [:]
    var last: (event: BusEvent, payload: String?)?
    /// The `session.message` payload of `last`, once a subscribed socket needed it.
    var lastSessionMessage: String?

    func view(_ runID: String) -> ChatRunView {
        if let view = views[runID] { return view }
        let view = ChatRunView()
        views[runID] = view
        return view
    }

    func removeAll(cancelling loop: any LoopScheduler) {
        for view in views.values { view.deltaTimer.map(loop.cancel) }
        views.removeAll()
        agents.removeAll()
        last = nil
        lastSessionMessage = nil
    }
}
