import CompanionWire
import RelayCore
import Testing

@testable import CompanionBridge

/// An `CompanionTurnBook` with request ids `r1`, `r2`, … and helpers to read its actions.
struct TurnBookFixture {
    var book: CompanionTurnBook
    var now: Int64 = 1_000

    init(limits: CompanionTurnBook.Limits = .init()) {
        var counter = 0
        book = CompanionTurnBook(limits: limits) {
            counter += 1
            return "r\(counter)"
        }
    }

    mutating func start(_ id: String, _ text: String = "hi", in directory: String? = "/p/app") -> [CompanionTurnBook.Action] {
        book.start(id, text: text, directory: directory, now: now)
    }

    mutating func receive(_ frame: CompanionServerEvent) -> [CompanionTurnBook.Action] { book.receive(frame, now: now) }

    /// Feeds the raw text of a server frame through the decoder.
    mutating func receive(raw text: String) throws -> [CompanionTurnBook.Action] {
        book.receive(try #require(CompanionServerEvent.decode(Array(text.utf8))), now: now)
    }

    mutating func chunk(_ sessionID: String, _ content: String, type: String = "text", queued: Bool = false) -> [CompanionTurnBook.Action] {
        receive(.chunk(StreamChunk(sessionId: sessionID, chunk: .init(id: "chunk-0", type: type, content: content, isFinal: false)), queued: queued))
    }

    mutating func answer(_ requestID: String, _ content: String) -> [CompanionTurnBook.Action] {
        receive(.response(requestID: requestID, .answer(content, sessionID: "s")))
    }

    /// Starts `id` in a fresh directory session `sessionID`; returns the command's request id.
    mutating func run(_ id: String, session sessionID: String, in directory: String = "/p/app") throws -> String {
        let started = start(id, in: directory)
        let startID = try #require(Self.sent(started).last?["requestId"]?.stringValue)
        let commands = Self.sent(receive(.sessionStarted(requestID: startID, sessionID: sessionID)))
        return try #require(commands.last?["requestId"]?.stringValue)
    }

    static func sent(_ actions: [CompanionTurnBook.Action]) -> [JSONValue] {
        actions.compactMap { action in
            if case .send(let text) = action { return JSONValue.parse(text) }
            return nil
        }
    }

    static func types(_ actions: [CompanionTurnBook.Action]) -> [String] {
        sent(actions).compactMap { $0["type"]?.stringValue }
    }

    static func events(_ actions: [CompanionTurnBook.Action]) -> [String: [TurnEvent]] {
        var out: [String: [TurnEvent]] = [:]
        for case .emit(let id, let event) in actions { out[id, default: []].append(event) }
        return out
    }
}
