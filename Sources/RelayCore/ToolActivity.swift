/// A tool a backend runs while it answers a turn (Claude Code's Bash, Read, Edit, ...).
///
/// Its start and its end share `id`. Every field is bounded here, whatever the backend sent.
public struct ToolActivity: Sendable, Equatable {
    /// Largest input kept, in UTF-8 bytes; a larger one is replaced by `{}`.
    public static let inputLimit = 16_384
    /// Longest id, name and label kept, in characters.
    public static let textLimit = 256
    /// Longest result text kept, in UTF-8 bytes (longer ones are cut, ending with "…").
    public static let resultLimit = 8_192

    /// The backend's id for this use of the tool.
    public var id: String
    public var name: String
    /// One short line for people (a command, a file path), when the backend has one.
    public var label: String?
    /// The tool's input as the text of a JSON object, `{}` when unknown or too large.
    public var inputJSON: String
    /// How it ended: nil on start, or when the backend did not say.
    public var success: Bool?
    /// What it returned, as text (on end, when the backend says), at most `resultLimit` bytes.
    public var result: String?

    public init(id: String, name: String, label: String? = nil, inputJSON: String = "{}", success: Bool? = nil, result: String? = nil) {
        self.id = String(id.prefix(Self.textLimit))
        self.name = String(name.prefix(Self.textLimit))
        self.label = label.map { String($0.prefix(Self.textLimit)) }
        self.inputJSON = inputJSON.utf8.count <= Self.inputLimit ? inputJSON : "{}"
        self.success = success
        self.result = result.map(Self.bounded)
    }

    /// `text` cut to at most `resultLimit` UTF-8 bytes on a character boundary.
    static func bounded(_ text: String) -> String {
        guard text.utf8.count > resultLimit else { return text }
        var cut = ""
        var bytes = 0
        for character in text {
            let size = character.utf8.count
            if bytes + size > resultLimit - 3 { break }
            cut.append(character)
            bytes += size
        }
        return cut + "…"
    }
}

/// A tool that a running turn's backend started or finished, as the bus carries it (live only).
public struct ToolProgress: Sendable, Equatable {
    public enum Phase: String, Sendable {
        case started
        case ended
    }

    public var turn: TurnRef
    /// The server id the turn's answer will have.
    public var eventID: String
    public var conversationID: String
    public var phase: Phase
    public var activity: ToolActivity

    public init(turn: TurnRef, eventID: String, conversationID: String, phase: Phase, activity: ToolActivity) {
        self.turn = turn
        self.eventID = eventID
        self.conversationID = conversationID
        self.phase = phase
        self.activity = activity
    }
}
