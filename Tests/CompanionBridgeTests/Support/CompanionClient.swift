import Foundation
import RelayCore
import RelayTesting
import Testing

/// A Companion client on an in-memory socket: the app's envelopes out, every frame in checked
/// against the app's decoder (a frame the app would drop fails the test).
final class CompanionClient {
    let socket: TestSocket
    /// Every frame read so far, in order.
    private(set) var frames: [JSONValue] = []
    private var unread: [JSONValue] = []
    /// The `welcome`, when the socket got one first.
    private(set) var welcome: JSONValue?

    init(_ socket: TestSocket) {
        self.socket = socket
        let first = read()
        if first.first?["type"]?.stringValue == "welcome" {
            welcome = first.first
            unread = Array(first.dropFirst())
        } else {
            unread = first
        }
    }

    /// An app envelope; returns its request id (a fresh uppercase UUID unless given; nil = omitted).
    @discardableResult
    func send(_ type: String, _ data: JSONValue = .object([:]), requestID: String? = UUID().uuidString) -> String? {
        var frame: [String: JSONValue] = ["type": .string(type), "timestamp": .string("2026-01-02T03:04:05Z"), "data": data]
        if let requestID { frame["requestId"] = .string(requestID) }
        socket.send(json: .object(frame))
        return requestID
    }

    func sendRaw(_ text: String) { socket.send(text) }

    /// The app's bare frame when it leaves the foreground: no envelope, no request id.
    func background(_ sessionID: String = "") {
        socket.send(
            json: .object(["type": .string("client_backgrounding"), "sessionId": .string(sessionID), "timestamp": .string("2026-01-02T03:04:05Z")])
        )
    }

    /// The frames that arrived since the last read, each checked against the app's decoder.
    func read() -> [JSONValue] {
        var fresh = unread
        unread = []
        for frame in socket.read() {
            guard case .text(let text) = frame else { continue }
            guard let json = JSONValue.parse(text) else {
                Issue.record("a frame is not JSON: \(text.prefix(200))")
                continue
            }
            for problem in AppDecoder.problems(json) { Issue.record("the app would drop it: \(problem) in \(text.prefix(400))") }
            frames.append(json)
            fresh.append(json)
        }
        return fresh
    }

    /// Sends, then returns the first frame carrying the request id and the frames before it.
    func request(_ type: String, _ data: JSONValue = .object([:])) throws -> (reply: JSONValue, before: [JSONValue]) {
        let id = send(type, data)
        return try reply(to: id)
    }

    /// The first unread frame with `requestId == id`, and the frames read before it.
    func reply(to id: String?) throws -> (reply: JSONValue, before: [JSONValue]) {
        let fresh = read()
        let index = try #require(fresh.firstIndex { $0["requestId"]?.stringValue == id }, "no reply to \(id ?? "nil") in \(fresh)")
        unread = Array(fresh[(index + 1)...])
        return (fresh[index], Array(fresh[..<index]))
    }

    /// The error frame answering `type`, checked to carry `code` in both forms.
    @discardableResult
    func expectError(_ type: String, _ data: JSONValue, _ code: String) throws -> JSONValue {
        let (reply, _) = try request(type, data)
        Self.checkError(reply, code)
        return reply
    }

    static func checkError(_ frame: JSONValue, _ code: String) {
        #expect(frame["type"] == .string("error"), "\(frame)")
        #expect(frame["data"]?["code"] == .string(code) && frame["error"]?["code"] == .string(code), "\(frame)")
        #expect(frame["data"]?["message"]?.stringValue?.isEmpty == false && frame["error"]?["message"]?.stringValue != nil, "\(frame)")
    }

    /// The app's `subscribe`; returns `subscribed` and the frames before it.
    @discardableResult
    func subscribe(
        _ sessionIDs: String...,
        events: [String] = ["streamData", "streamComplete", "toolUse", "toolResult", "assistantMessage"]
    ) throws -> (
        reply: JSONValue, before: [JSONValue]
    ) {
        let (reply, before) = try request(
            "subscribe",
            .object(["events": .array(events.map(JSONValue.string)), "sessionIds": .array(sessionIDs.map(JSONValue.string))])
        )
        #expect(reply["type"] == .string("subscribed"), "\(reply)")
        return (reply, before)
    }

    /// The app's `claudeCommand {command, projectPath, sessionId}`; the frames up to its reply, and those after.
    func command(_ text: String, session: String?, path: String?) throws -> CompanionTurn {
        var data: [String: JSONValue] = ["command": .string(text)]
        if let path { data["projectPath"] = .string(path) }
        if let session { data["sessionId"] = .string(session) }
        let id = try #require(send("claudeCommand", .object(data)))
        let (reply, before) = try reply(to: id)
        return CompanionTurn(requestID: id, reply: reply, before: before, after: read())
    }

    /// The socket still answers a ping.
    var isOpen: Bool {
        guard !socket.isClosed, let (reply, _) = try? request("ping") else { return false }
        return reply["type"] == .string("pong")
    }
}

/// One `claudeCommand` as the asking socket saw it.
struct CompanionTurn {
    let requestID: String
    let reply: JSONValue
    /// Frames between the send and the reply.
    let before: [JSONValue]
    /// Frames after the reply.
    let after: [JSONValue]

    var frames: [JSONValue] { before + [reply] + after }
}

extension [JSONValue] {
    /// The frames of one type.
    func of(_ type: String) -> [JSONValue] { filter { $0["type"]?.stringValue == type } }

    /// The chunks of `streamChunk` frames (of one session when given).
    func chunks(_ sessionID: String? = nil) -> [JSONValue] {
        of("streamChunk").filter { sessionID == nil || $0["data"]?["sessionId"]?.stringValue == sessionID }.compactMap { $0["data"]?["chunk"] }
    }

    /// The text chunks' contents.
    func texts(_ sessionID: String? = nil) -> [String] {
        chunks(sessionID).filter { $0["type"] == .string("text") }.compactMap { $0["content"]?.stringValue }
    }

    /// The `conversationResult` of a session (with this result, when given).
    func result(_ sessionID: String, _ result: String? = nil) -> JSONValue? {
        of("conversationResult").first { frame in
            frame["data"]?["sessionId"]?.stringValue == sessionID && (result == nil || frame["data"]?["result"]?.stringValue == result)
        }
    }
}
