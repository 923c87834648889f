/// Parses input lines that start with `/` into ``Command`` values.
///
/// Command names are case-insensitive. A line starting with `//` is not a command: it is a message
/// that starts with one `/` (see ``messageText(_:)``).
public enum CommandParser {
    /// `nil` when `line` is a message rather than a command; otherwise the command or why not.
    public static func parse(_ line: String) -> Result<Command, CommandError>? {
        let trimmed = line.drop { $0.isWhitespace }
        guard trimmed.first == "/", !trimmed.hasPrefix("//") else { return nil }
        let body = trimmed.dropFirst()
        let name = body.prefix { !$0.isWhitespace }.lowercased()
        let argument = body.dropFirst(name.count).trimmingWhitespace()
        return Result { () throws(CommandError) in try command(name, argument: argument) }
    }

    /// The text to send for a line that is not a command: `//x` becomes `/x`.
    public static func messageText(_ line: String) -> String {
        line.hasPrefix("//") ? String(line.dropFirst()) : line
    }

    private static func command(_ name: String, argument: String) throws(CommandError) -> Command {
        switch name {
        case "help":
            return .help(topic: argument.isEmpty ? nil : argument.lowercased().trimmingPrefix("/"))
        case "new":
            guard !argument.isEmpty else { return .new(backend: nil, title: nil) }
            let backend = argument.prefix { !$0.isWhitespace }
            let title = argument.dropFirst(backend.count).trimmingWhitespace()
            return .new(backend: String(backend), title: title.isEmpty ? nil : title)
        case "buffer":
            guard !argument.isEmpty else { throw CommandError(.missingArgument, "/buffer needs a number or a name") }
            guard argument.allSatisfy(\.isASCIIDigitOrSign) else { return .buffer(.name(argument)) }
            guard let number = Int(argument), number >= 1 else {
                throw CommandError(.badNumber, "/buffer: \(argument) is not a buffer number (1 or more)")
            }
            return .buffer(.number(number))
        case "close", "abort", "backends", "quit":
            guard argument.isEmpty else { throw CommandError(.unexpectedArgument, "/\(name) takes no arguments") }
            switch name {
            case "close": return .close
            case "abort": return .abort
            case "backends": return .backends
            default: return .quit
            }
        case "rename":
            guard !argument.isEmpty else { throw CommandError(.missingArgument, "/rename needs a title") }
            return .rename(title: argument)
        case "search":
            guard !argument.isEmpty else { throw CommandError(.missingArgument, "/search needs some text") }
            return .search(text: argument)
        case "history":
            guard !argument.isEmpty else { return .history(limit: nil) }
            guard let limit = Int(argument), (1...Command.maxHistoryLimit).contains(limit) else {
                throw CommandError(.badNumber, "/history: \(argument) is not a number from 1 to \(Command.maxHistoryLimit)")
            }
            return .history(limit: limit)
        case "approve", "always", "deny":
            guard !argument.contains(where: \.isWhitespace) else { throw CommandError(.unexpectedArgument, "/\(name) takes one approval id at most") }
            let choice: ApprovalChoice = name == "approve" ? .allowOnce : name == "always" ? .allowAlways : .deny
            return .answer(choice, id: argument.isEmpty ? nil : argument)
        case "":
            throw CommandError(.unknownCommand, "a command name must follow / (try /help; // sends a message starting with /)")
        default:
            throw CommandError(.unknownCommand, "unknown command /\(name) (try /help)")
        }
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }

    func trimmingPrefix(_ prefix: String) -> String {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : String(self)
    }
}

extension Character {
    fileprivate var isASCIIDigitOrSign: Bool { isASCII && (isNumber || self == "-" || self == "+") }
}
