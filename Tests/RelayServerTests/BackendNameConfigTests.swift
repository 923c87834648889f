import RelayServer
import Testing

/// A backend's name becomes the name of its account's files under `<data_dir>/accounts`.
@Suite struct BackendNameConfigTests {
    /// The keys each kind needs besides `name` and `kind`.
    static let kinds: [(kind: String, keys: String)] = [
        ("echo", ""), ("command", "command = [\"cat\"]\n"), ("claude-code", ""), ("openclaw", "url = \"ws://h:1\"\n"),
        ("companion", "url = \"ws://h:1/ws\"\ntoken = \"t\"\n"), ("clawline", "url = \"ws://h:1/ws\"\n"),
        ("discoclaw", "url = \"http://h:1\"\ntoken = \"t\"\n"),
    ]

    static func backend(_ name: String, kind: String = "clawline") -> String {
        let keys = kinds.first { $0.kind == kind }?.keys ?? ""
        return "[server]\nlog_level = \"info\"\n\n[[backends]]\nname = \"\(name)\"\nkind = \"\(kind)\"\n" + keys
    }

    @Test(arguments: ["../x", "a/b", "/etc/x", ".hidden", ".", "..", "", "x y", "a:b", "tab\\tname", "é", String(repeating: "a", count: 65)])
    func aNameThatIsNotAPlainFileNameIsRefusedAtItsLine(name: String) {
        expectRejection(Self.backend(name), .invalidValue, "relay.toml:5: [[backends]] name: expected 1 to 64 letters, digits, -, _ or .")
    }

    @Test(arguments: kinds.map(\.kind))
    func everyKindIsChecked(kind: String) {
        expectRejection(Self.backend("../x", kind: kind), .invalidValue, "relay.toml:5: [[backends]] name:")
    }

    @Test(arguments: ["home", "Home_2", "a.b", "x-1", "a..b", "echo.", String(repeating: "a", count: 64)])
    func lettersDigitsAndTheThreeMarksAreAccepted(name: String) throws {
        let config = try RelayConfig.parse(text: Self.backend(name), fileName: "relay.toml")
        #expect(config.backends.map(\.name) == [name])
    }
}
