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

/// The runs operators are being shown, and the last core event encoded for them (the bus hands
/// the same event to every socket in turn).
final class GatewayChatRuns {
    var views: [String: ChatRunView] = [:]
    var last: (event: BusEvent, payload: String?)?

    func view(_ runID: String) -> ChatRunView {
        if let view = views[runID] { return view }
        let view = ChatRunView()
        views[runID] = view
        return view
    }

    func removeAll(cancelling loop: any LoopScheduler) {
        for view in views.values { view.deltaTimer.map(loop.cancel) }
        views.removeAll()
        last = nil
    }
}
