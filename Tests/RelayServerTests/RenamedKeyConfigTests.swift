import RelayServer
import Testing

/// One word per concept in the file: a key's old name still works, with a warning that names the
/// file, the line and the name to write instead.
@Suite struct RenamedKeyConfigTests {
    static let claudeCode = "[[backends]]\nname = \"claude\"\nkind = \"claude-code\"\ncommand = \"/bin/sh\"\n"

    @Test func aBackendsEnvironmentIsEnvAndTheOldNameWarns() throws {
        let current = try RelayConfig.parse(text: Self.claudeCode + "env = { A = \"1\" }\n", fileName: "relay.toml")
        let old = try RelayConfig.parse(text: Self.claudeCode + "environment = { A = \"1\" }\n", fileName: "relay.toml")
        guard case .claudeCode(let settings) = try #require(old.backends.first).kind else {
            Issue.record("not a claude-code backend: \(old.backends)")
            return
        }
        #expect(settings.environment == ["A": "1"])
        #expect(old.backends == current.backends)
        #expect(current.warnings.isEmpty)
        #expect(old.warnings.map(\.description) == ["relay.toml:5: [[backends]] environment: an old name; write env (the same setting)"])
    }

    @Test func aCommandBackendTakesEnvironmentToo() throws {
        let text = "[[backends]]\nname = \"cmd\"\nkind = \"command\"\ncommand = [\"cat\"]\nenvironment = { A = \"1\" }\n"
        let config = try RelayConfig.parse(text: text, fileName: "relay.toml")
        #expect(config.backends.first?.kind == .command(command: ["cat"], timeoutSeconds: 30, environment: ["A": "1"]))
        #expect(config.warnings.map(\.line) == [5])
    }

    @Test(arguments: [
        ("clawline", "max_queued_messages", "max_queued_turns"), ("companion", "max_queued_commands", "max_queued_turns"),
        ("discoclaw", "turn_inactivity_seconds", "stream_inactivity_seconds"), ("gateway", "max_payload_bytes", "max_frame_bytes"),
    ])
    func aListenerKeysOldNameReadsAsTheNewOne(section: String, old: String, new: String) throws {
        let written = try RelayConfig.parse(text: "[\(section)]\nlisten = \"127.0.0.1:0\"\n\(old) = 7777777\n", fileName: "relay.toml")
        let current = try RelayConfig.parse(text: "[\(section)]\nlisten = \"127.0.0.1:0\"\n\(new) = 7777777\n", fileName: "relay.toml")
        #expect(written.warnings.map(\.description) == ["relay.toml:3: [\(section)] \(old): an old name; write \(new) (the same setting)"])
        #expect(current.warnings.isEmpty)
        #expect("\(written.clawline as Any)\(written.companion as Any)\(written.discoClaw as Any)\(written.gateway as Any)".contains("7777777"))
        #expect(
            "\(written.clawline as Any)\(written.companion as Any)\(written.discoClaw as Any)\(written.gateway as Any)"
                == "\(current.clawline as Any)\(current.companion as Any)\(current.discoClaw as Any)\(current.gateway as Any)"
        )
    }

    @Test func bothNamesAtOnceAreAnError() {
        expectRejection(
            Self.claudeCode + "env = { A = \"1\" }\nenvironment = { A = \"2\" }\n",
            .invalidValue,
            "relay.toml:6: [[backends]] environment: an old name of env, which is set too; keep one"
        )
    }

    @Test func anErrorInAValueWrittenUnderItsOldNameNamesTheOldName() {
        expectRejection(
            "[clawline]\nmax_queued_messages = \"many\"\n",
            .wrongType,
            #"relay.toml:2: [clawline] max_queued_messages: expected a positive integer, got "many""#
        )
    }
}
