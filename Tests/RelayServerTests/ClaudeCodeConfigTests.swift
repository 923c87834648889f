import Foundation
import RelayServer
import Testing

@Suite struct ClaudeCodeConfigTests {
    private func backend(_ keys: String) throws -> BackendSettings? {
        try RelayConfig.parse(text: "[[backends]]\nname = \"claude\"\nkind = \"claude-code\"\n" + keys, fileName: "relay.toml").backends.first
    }

    @Test func defaultsNeedNoKeys() throws {
        let settings = try #require(try backend(""))
        #expect(settings.kindName == "claude-code")
        #expect(settings.kind == .claudeCode(ClaudeCodeSettings()))
        #expect(ClaudeCodeSettings().command == ["claude"] && ClaudeCodeSettings().timeoutSeconds == 600)
    }

    @Test func everyKey() throws {
        let directory = NSTemporaryDirectory()
        let settings = try backend(
            """
            command = ["/opt/claude/bin/claude", "--debug"]
            timeout_seconds = 120
            max_seconds = 900
            env = { ANTHROPIC_MODEL = "sonnet" }
            working_directory = "\(directory)"
            extra_args = ["--permission-mode", "acceptEdits"]
            """
        )
        var expected = ClaudeCodeSettings()
        expected.command = ["/opt/claude/bin/claude", "--debug"]
        expected.timeoutSeconds = 120
        expected.maxSeconds = 900
        expected.environment = ["ANTHROPIC_MODEL": "sonnet"]
        expected.workingDirectory = directory
        expected.extraArguments = ["--permission-mode", "acceptEdits"]
        #expect(settings?.kind == .claudeCode(expected))
        #expect(
            try backend("command = \"/usr/local/bin/claude\"\n")?.kind
                == .claudeCode(
                    {
                        var one = ClaudeCodeSettings()
                        one.command = ["/usr/local/bin/claude"]
                        return one
                    }()
                )
        )
    }

    @Test func badValuesNameTheFileLineAndKey() {
        let head = "[[backends]]\nname = \"claude\"\nkind = \"claude-code\"\n"
        expectRejection(head + "command = []\n", .invalidValue, "relay.toml:4: [[backends]] command: needs the program to run")
        expectRejection(head + "command = \"\"\n", .invalidValue, "relay.toml:4: [[backends]] command: needs the program to run")
        expectRejection(head + "command = 5\n", .wrongType, "relay.toml:4: [[backends]] command: expected an array of strings, got 5")
        expectRejection(head + "timeout_seconds = 0\n", .invalidValue, "relay.toml:4: [[backends]] timeout_seconds:")
        expectRejection(head + "extra_args = \"--verbose\"\n", .wrongType, "relay.toml:4: [[backends]] extra_args: expected an array of strings")
        expectRejection(head + "environment = [\"A=b\"]\n", .wrongType, "relay.toml:4: [[backends]] environment: expected a table of strings")
        expectRejection(
            head + "working_directory = \"srv/app\"\n",
            .invalidValue,
            "relay.toml:4: [[backends]] working_directory: must be an absolute path"
        )
        expectRejection(
            head + "working_directory = \"/nonexistent/clawrelay\"\n",
            .invalidValue,
            #"relay.toml:4: [[backends]] working_directory: "/nonexistent/clawrelay" is not a directory"#
        )
        expectRejection(head + "env = { A = 5 }\n", .wrongType, #"relay.toml:4: [[backends]] env: "A" must be a string"#)
        expectRejection(head + "url = \"ws://x\"\n", .invalidValue, "relay.toml:4: [[backends]] url: applies only to kind = ")
        expectRejection(
            "[[backends]]\nname = \"x\"\nkind = \"command\"\ncommand = [\"cat\"]\nextra_args = []\n",
            .invalidValue,
            #"relay.toml:5: [[backends]] extra_args: applies only to kind = "claude-code""#
        )
    }
}
