import Foundation
import RelayServer
import Testing

#if canImport(Glibc)
import Glibc
#endif

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

    @Test func permissionsApprovalsAndProcesses() throws {
        let settings = try backend(
            """
            permission_mode = "acceptEdits"
            allowed_tools = ["Bash(git status)", "Read"]
            disallowed_tools = ["WebFetch"]
            approval_timeout_seconds = 120
            max_processes = 2
            idle_seconds = 60
            """
        )
        var expected = ClaudeCodeSettings()
        expected.permissionMode = .acceptEdits
        expected.allowedTools = ["Bash(git status)", "Read"]
        expected.disallowedTools = ["WebFetch"]
        expected.approvalTimeoutSeconds = 120
        expected.maxProcesses = 2
        expected.idleSeconds = 60
        #expect(settings?.kind == .claudeCode(expected))
        let defaults = ClaudeCodeSettings()
        #expect(
            defaults.permissionMode == .ask && defaults.approvalTimeoutSeconds == 600 && defaults.maxProcesses == 4 && defaults.idleSeconds == 600
        )
    }

    @Test func bypassPermissionsIsRefusedAsRootAsClaudeCodeItselfWould() throws {
        let head = "[[backends]]\nname = \"claude\"\nkind = \"claude-code\"\n"
        if geteuid() == 0 {
            expectRejection(
                head + "permission_mode = \"bypassPermissions\"\n",
                .invalidValue,
                #"relay.toml:4: [[backends]] permission_mode: "bypassPermissions" cannot be used while the relay runs as root: Claude Code itself refuses it"#
            )
        } else {
            guard case .claudeCode(let settings)? = try backend("permission_mode = \"bypassPermissions\"\n")?.kind else {
                Issue.record("not a claude-code backend")
                return
            }
            #expect(settings.permissionMode == .bypassPermissions)
        }
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
            head + "permission_mode = \"yolo\"\n",
            .invalidValue,
            #"relay.toml:4: [[backends]] permission_mode: expected one of "ask", "acceptEdits", "auto", "dontAsk", "plan", "bypassPermissions", got "yolo""#
        )
        expectRejection(head + "allowed_tools = \"Bash\"\n", .wrongType, "relay.toml:4: [[backends]] allowed_tools: expected an array of strings")
        expectRejection(head + "disallowed_tools = [\"\"]\n", .invalidValue, "relay.toml:4: [[backends]] disallowed_tools: expected tool rules")
        expectRejection(head + "approval_timeout_seconds = 0\n", .invalidValue, "relay.toml:4: [[backends]] approval_timeout_seconds:")
        expectRejection(
            head + "approval_timeout_seconds = 100000\n",
            .invalidValue,
            "relay.toml:4: [[backends]] approval_timeout_seconds: expected 1 to 86400, got 100000"
        )
        expectRejection(head + "max_processes = 65\n", .invalidValue, "relay.toml:4: [[backends]] max_processes: expected 1 to 64, got 65")
        expectRejection(head + "idle_seconds = 5\n", .invalidValue, "relay.toml:4: [[backends]] idle_seconds: expected 10 to 86400, got 5")
        expectRejection(
            "[[backends]]\nname = \"x\"\nkind = \"command\"\ncommand = [\"cat\"]\nextra_args = []\n",
            .invalidValue,
            #"relay.toml:5: [[backends]] extra_args: applies only to kind = "claude-code""#
        )
    }
}
