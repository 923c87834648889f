import ChatModel
import Testing

@Suite struct CommandParserTests {
    private func parse(_ line: String) -> Command? {
        guard case .success(let command)? = CommandParser.parse(line) else { return nil }
        return command
    }

    private func error(_ line: String) -> CommandError? {
        guard case .failure(let error)? = CommandParser.parse(line) else { return nil }
        return error
    }

    @Test func everyCommand() {
        #expect(parse("/help") == .help(topic: nil))
        #expect(parse("/help /new") == .help(topic: "new"))
        #expect(parse("/new") == .new(backend: nil, title: nil))
        #expect(parse("/new codex") == .new(backend: "codex", title: nil))
        #expect(parse("/new claude  Trip to Kyoto ") == .new(backend: "claude", title: "Trip to Kyoto"))
        #expect(parse("/buffer 3") == .buffer(.number(3)))
        #expect(parse("/buffer work") == .buffer(.name("work")))
        #expect(parse("/buffer work stuff") == .buffer(.name("work stuff")))
        #expect(parse("/close") == .close)
        #expect(parse("/rename  New title") == .rename(title: "New title"))
        #expect(parse("/abort") == .abort)
        #expect(parse("/backends") == .backends)
        #expect(parse("/search needle in hay") == .search(text: "needle in hay"))
        #expect(parse("/history") == .history(limit: nil))
        #expect(parse("/history 50") == .history(limit: 50))
        #expect(parse("/quit") == .quit)
        #expect(parse("  /QUIT") == .quit, "names ignore case and leading spaces")
    }

    @Test func messagesAreNotCommands() {
        #expect(CommandParser.parse("hello") == nil)
        #expect(CommandParser.parse("//etc/hosts is a path") == nil)
        #expect(CommandParser.messageText("//etc/hosts is a path") == "/etc/hosts is a path")
        #expect(CommandParser.messageText("plain") == "plain")
    }

    @Test func errorsSayWhatIsWrong() {
        #expect(error("/frobnicate")?.code == .unknownCommand)
        #expect(error("/frobnicate")?.description == "unknown command /frobnicate (try /help)")
        #expect(error("/")?.code == .unknownCommand)
        #expect(error("/buffer")?.code == .missingArgument)
        #expect(error("/buffer 0")?.code == .badNumber)
        #expect(error("/buffer -2")?.code == .badNumber)
        #expect(error("/buffer 99999999999999999999")?.code == .badNumber)
        #expect(error("/rename")?.code == .missingArgument)
        #expect(error("/search  ")?.code == .missingArgument)
        #expect(error("/history ten")?.code == .badNumber)
        #expect(error("/history 0")?.code == .badNumber)
        #expect(error("/history 1001")?.message == "/history: 1001 is not a number from 1 to 1000")
        #expect(error("/close now")?.code == .unexpectedArgument)
        #expect(error("/quit please")?.description == "/quit takes no arguments")
    }
}
