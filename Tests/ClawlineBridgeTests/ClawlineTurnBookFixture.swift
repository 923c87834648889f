import ClawlineWire
import RelayCore
import Testing

@testable import ClawlineBridge

/// A `ClawlineTurnBook` on a test clock with message ids `c_1`, `c_2`, …, the provider's side of
/// the conversation as helpers, and readers for the book's actions.
struct ClawlineTurnBookFixture {
    static let me = "0f0e8a3c-6a6b-4c1d-9e2f-1a2b3c4d5e6f"
    static let other = "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
    var book: ClawlineTurnBook
    let clock = TestClock()
    private var events = 0

    init(limits: ClawlineTurnBook.Limits = .init()) {
        var counter = 0
        book = ClawlineTurnBook(deviceID: Self.me, limits: limits) {
            counter += 1
            return "c_\(counter)"
        }
    }

    var now: Int64 { clock.nowMillis() }

    mutating func advance(seconds: Int64) -> [ClawlineTurnBook.Action] {
        clock.advance(millis: seconds * 1_000)
        return book.tick(now: now)
    }

    mutating func start(_ id: String, _ text: String = "hi") -> [ClawlineTurnBook.Action] { book.start(id, text: text, now: now) }

    mutating func up(replay: Int = 0, historyReset: Bool = false) -> [ClawlineTurnBook.Action] {
        book.linkUp(.init(success: true, replayCount: replay, historyReset: historyReset), now: now)
    }

    mutating func receive(_ frame: ServerFrame) -> [ClawlineTurnBook.Action] { book.receive(frame, now: now) }

    /// A new stored event id, `s_1`, `s_2`, …
    mutating func nextEventID() -> String {
        events += 1
        return "s_\(events)"
    }

    /// The provider echoes a user message (ours unless `from` says otherwise); returns its id.
    @discardableResult
    mutating func echo(_ text: String = "hi", from device: String = me) -> String {
        let id = nextEventID()
        _ = receive(.message(ServerFrame.Message(id: id, role: "user", content: text, deviceId: device)))
        return id
    }

    mutating func streaming(_ id: String, _ text: String) -> [ClawlineTurnBook.Action] {
        receive(.message(ServerFrame.Message(id: id, role: "assistant", content: text, streaming: true)))
    }

    mutating func final(_ id: String, _ text: String) -> [ClawlineTurnBook.Action] {
        receive(.message(ServerFrame.Message(id: id, role: "assistant", content: text)))
    }

    static func sent(_ actions: [ClawlineTurnBook.Action]) -> [JSONValue] {
        actions.compactMap { if case .send(let text) = $0 { JSONValue.parse(text) } else { nil } }
    }

    /// The ids of the `message` frames sent.
    static func sentIDs(_ actions: [ClawlineTurnBook.Action]) -> [String] {
        sent(actions).compactMap { $0["id"]?.stringValue }
    }

    static func events(_ actions: [ClawlineTurnBook.Action]) -> [String: [TurnEvent]] {
        var out: [String: [TurnEvent]] = [:]
        for case .emit(let id, let event) in actions { out[id, default: []].append(event) }
        return out
    }

    static func resyncs(_ actions: [ClawlineTurnBook.Action]) -> Int {
        actions.filter { if case .resync = $0 { true } else { false } }.count
    }
}
