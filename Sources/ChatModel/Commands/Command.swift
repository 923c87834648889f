/// A slash command typed in the input line, parsed by ``CommandParser``; the caller executes it.
public enum Command: Equatable, Sendable {
    /// How `/buffer` names a buffer.
    public enum BufferTarget: Equatable, Sendable {
        /// Its number in the buffer list, from 1.
        case number(Int)
        /// A case-insensitive prefix of its name.
        case name(String)
    }

    /// `/help [command]`
    case help(topic: String?)
    /// `/new [backend] [title]`: a new conversation; `nil` backend means the default one.
    case new(backend: String?, title: String?)
    /// `/buffer N|name`
    case buffer(BufferTarget)
    /// `/close`: closes the buffer, not the conversation.
    case close
    /// `/rename TITLE`
    case rename(title: String)
    /// `/abort`: stops the answer running in this buffer.
    case abort
    /// `/backends`
    case backends
    /// `/search TEXT`: searches this buffer backwards, as Ctrl-R does.
    case search(text: String)
    /// `/history [N]`: loads the last N messages (1…1000) of this buffer; `nil` means the default.
    case history(limit: Int?)
    /// `/approve`, `/always`, `/deny [id]`: answers the oldest approval waiting in this buffer, or
    /// the one whose id starts with `id`.
    case answer(ApprovalChoice, id: String?)
    /// `/quit`
    case quit

    /// The command names, without the slash, in the order `/help` lists them.
    public static let names = [
        "help", "new", "buffer", "close", "rename", "abort", "backends", "search", "history", "approve", "always", "deny", "quit",
    ]

    /// One line of help per command.
    public static let usage: [String: String] = [
        "help": "/help [command]  list the commands and keys",
        "new": "/new [backend] [title]  start a conversation (default backend if none given)",
        "buffer": "/buffer N|name  go to buffer N, or the first whose name starts with name",
        "close": "/close  close this buffer (the conversation stays on the server)",
        "rename": "/rename TITLE  rename this conversation",
        "abort": "/abort  stop the answer being written (also Ctrl-C)",
        "backends": "/backends  list the backends",
        "search": "/search TEXT  search this buffer backwards (also Ctrl-R)",
        "history": "/history [N]  load the last N messages (1-1000)",
        "approve": "/approve [id]  allow the approval waiting here once (also Alt-O)",
        "always": "/always [id]  allow it, and the same again in this session (also Alt-S)",
        "deny": "/deny [id]  deny the approval waiting here (also Alt-N)",
        "quit": "/quit  leave (also Ctrl-D on an empty line)",
    ]

    /// The largest `/history` limit.
    public static let maxHistoryLimit = 1000
}

/// Why a typed command could not be parsed; ``description`` is meant for the user.
public struct CommandError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: Equatable, Sendable {
        case unknownCommand
        case missingArgument
        case unexpectedArgument
        case badNumber
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
