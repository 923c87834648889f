import Foundation
import RelayCore

/// The wire form of the hints that are not positions: live events on `clawrelay_live` and
/// requests on `clawrelay_control`, as compact JSON naming the sending node (`o`).
///
/// Live cases: streaming progress, typing, tools, status lines and approvals. Durable events
/// (messages, failures) never go this way: they are in the log.
enum HintCodec {
    static let liveChannel = "clawrelay_live"
    static let controlChannel = "clawrelay_control"

    /// The live event's payload, or nil for a durable event.
    static func encode(live event: BusEvent, stream: String, origin: String) -> String? {
        var wire = LiveWire(o: origin, s: stream, k: .status, c: event.conversationID)
        switch event {
        case .message, .turnFailed:
            return nil
        case .streaming(let progress):
            (wire.k, wire.r, wire.e, wire.x, wire.at, wire.q) = (
                .progress, progress.turn, progress.eventID, progress.content, progress.startedAt, progress.seq
            )
        case .assistantTyping(_, let active):
            (wire.k, wire.on) = (.typing, active)
        case .tool(let tool):
            let activity = tool.activity
            (wire.k, wire.r, wire.e, wire.ph) = (.tool, tool.turn, tool.eventID, tool.phase.rawValue)
            wire.t = ToolWire(i: activity.id, n: activity.name, l: activity.label, in: activity.inputJSON, ok: activity.success, res: activity.result)
        case .status(let status):
            (wire.r, wire.e, wire.x) = (status.turn, status.eventID, status.text)
        case .approval(let update):
            wire.k = .approval
            wire.ap = update.approval
            if case .resolved(_, let resolution) = update { wire.res = resolution }
        }
        return text(wire)
    }

    /// The sender, stream and event of a live payload; nil for one that does not decode.
    static func decodeLive(_ payload: String) -> (origin: String, stream: String, event: BusEvent)? {
        guard let wire = try? JSONDecoder().decode(LiveWire.self, from: Data(payload.utf8)) else { return nil }
        let event: BusEvent
        switch wire.k {
        case .progress:
            guard let turn = wire.r, let eventID = wire.e else { return nil }
            event = .streaming(
                TurnProgress(turn: turn, eventID: eventID, conversationID: wire.c, content: wire.x ?? "", startedAt: wire.at ?? 0, seq: wire.q ?? 0)
            )
        case .typing:
            event = .assistantTyping(conversationID: wire.c, active: wire.on ?? false)
        case .tool:
            guard let turn = wire.r, let eventID = wire.e, let tool = wire.t, let phase = wire.ph.flatMap(ToolProgress.Phase.init) else { return nil }
            let activity = ToolActivity(id: tool.i, name: tool.n, label: tool.l, inputJSON: tool.in, success: tool.ok, result: tool.res)
            event = .tool(ToolProgress(turn: turn, eventID: eventID, conversationID: wire.c, phase: phase, activity: activity))
        case .status:
            guard let turn = wire.r, let eventID = wire.e else { return nil }
            event = .status(TurnStatus(turn: turn, eventID: eventID, conversationID: wire.c, text: wire.x ?? ""))
        case .approval:
            guard let approval = wire.ap else { return nil }
            event = .approval(wire.res.map { .resolved(approval, $0) } ?? .requested(approval))
        }
        return (wire.o, wire.s, event)
    }

    static func encode(control: ClusterControl, origin: String) -> String {
        var wire = ControlWire(o: origin)
        switch control {
        case .abort(let conversationID, let runID, let reason): wire.abort = AbortWire(c: conversationID, r: runID, why: reason)
        case .readMoved(let cursor): wire.read = cursor
        case .conversationDeleted(let conversation): wire.deleted = conversation
        case .turnsHandedOver(let node): wire.handed = node
        case .pushTargetsChanged(let deviceID): wire.targets = deviceID
        }
        return text(wire)
    }

    static func decodeControl(_ payload: String) -> (origin: String, control: ClusterControl)? {
        guard let wire = try? JSONDecoder().decode(ControlWire.self, from: Data(payload.utf8)) else { return nil }
        if let abort = wire.abort { return (wire.o, .abort(conversationID: abort.c, runID: abort.r, reason: abort.why)) }
        if let cursor = wire.read { return (wire.o, .readMoved(cursor)) }
        if let conversation = wire.deleted { return (wire.o, .conversationDeleted(conversation)) }
        if let node = wire.handed { return (wire.o, .turnsHandedOver(node: node)) }
        if let deviceID = wire.targets { return (wire.o, .pushTargetsChanged(deviceID: deviceID)) }
        return nil
    }

    private static func text(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        // Plain Codable structs of strings, numbers and booleans always encode.
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

/// A live event on the wire: the sender, the stream, the kind and the fields that kind uses.
private struct LiveWire: Codable {
    enum Kind: String, Codable {
        case progress = "p"
        case typing = "y"
        case tool = "t"
        case status = "s"
        case approval = "a"
    }

    var o: String
    var s: String
    var k: Kind
    var c: String
    var r: TurnRef?
    var e: String?
    var x: String?
    var at: Int64?
    var q: Int64?
    var on: Bool?
    var ph: String?
    var t: ToolWire?
    var ap: Approval?
    var res: ApprovalResolution?
}

private struct ToolWire: Codable {
    var i: String
    var n: String
    var l: String?
    var `in`: String
    var ok: Bool?
    var res: String?
}

/// A request on the wire: the sender and one of the request kinds.
private struct ControlWire: Codable {
    var o: String
    var abort: AbortWire?
    var read: ReadCursor?
    var deleted: Conversation?
    /// The node id turns were handed to.
    var handed: String?
    /// The device whose push targets changed.
    var targets: String?
}

private struct AbortWire: Codable {
    var c: String
    var r: String?
    var why: String
}
