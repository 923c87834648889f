import ChatModel

/// A ``ChatState`` with a fixed clock and short ways to feed it.
struct ChatFixture {
    static let start: Int64 = 1_700_000_000_000
    var state: ChatState

    init(defaultBackend: String? = "claude", bell: Bool = true) {
        state = ChatState(
            configuration: ChatConfiguration(
                defaultBackend: defaultBackend,
                historyLimit: 200,
                clientIDPrefix: "t",
                bellOnActivity: bell,
                now: { ChatFixture.start }
            )
        )
    }

    /// Connected, 80×24, with these conversations listed (the most recent one becomes active).
    static func connected(_ sessions: [SessionSummary], columns: Int = 80, rows: Int = 24) -> ChatFixture {
        var fixture = ChatFixture()
        fixture.server(.connection(.connected))
        fixture.server(.backendsListed(names: ["claude", "codex"], defaultBackend: "claude"))
        fixture.input(.resize(columns: columns, rows: rows))
        fixture.server(.sessionsListed(sessions))
        return fixture
    }

    @discardableResult
    mutating func input(_ input: ChatInput) -> [ChatEffect] { state.handle(input) }

    @discardableResult
    mutating func server(_ event: ServerEvent) -> [ChatEffect] { state.handle(.server(event)) }

    @discardableResult
    mutating func key(_ key: Key) -> [ChatEffect] { state.handle(.key(key)) }

    @discardableResult
    mutating func keys(_ keys: Key...) -> [ChatEffect] { keys.flatMap { state.handle(.key($0)) } }

    /// Types text character by character; with `enter`, presses Enter and returns only what Enter did.
    @discardableResult
    mutating func type(_ text: String, enter: Bool = false) -> [ChatEffect] {
        let effects = text.flatMap { state.handle(.key(.character($0))) }
        return enter ? state.handle(.key(.enter)) : effects
    }

    /// Loads a history page of `count` assistant messages `<key>-<seq>` with seqs 1...count.
    @discardableResult
    mutating func history(_ key: String, _ seqs: ClosedRange<Int64>, text: (Int64) -> String = { "line \($0)" }) -> [ChatEffect] {
        server(.history(key: key, messages: seqs.map { message(key, $0, text: text($0)) }))
    }

    func message(_ key: String, _ seq: Int64, role: ChatRole = .assistant, text: String? = nil) -> ChatMessage {
        ChatMessage(id: "\(key)-\(seq)", seq: seq, role: role, text: text ?? "line \(seq)", timestamp: ChatFixture.start + seq * 60_000)
    }
}

func session(
    _ key: String,
    displayName: String? = nil,
    backend: String? = "claude",
    updatedAt: Int64 = 0,
    unread: Int = 0,
    lastRead: Int64? = nil
) -> SessionSummary {
    SessionSummary(key: key, displayName: displayName ?? key, backend: backend, unreadCount: unread, lastReadSeq: lastRead, updatedAt: updatedAt)
}

extension Array where Element == ChatEffect {
    var markReads: [ChatEffect] { filter { if case .markRead = $0 { return true } else { return false } } }
    var fetches: [ChatEffect] { filter { if case .fetchHistory = $0 { return true } else { return false } } }
}
