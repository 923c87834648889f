import ClawlineBridge
import CompanionBridge
import DiscoClawBridge
import GatewayBridge
import Testing

@testable import RelayServer

/// What a SIGHUP reload reports and applies, from two configuration files.
@Suite struct ConfigDiffTests {
    private static let base = """
        [server]
        log_level = "info"
        [clawline]
        listen = "127.0.0.1:18800"
        backend = "echo"
        [gateway]
        listen = "127.0.0.1:18789"
        shared_token = "first-secret-token"
        [companion]
        [[backends]]
        name = "echo"
        kind = "echo"
        [[backends]]
        name = "cmd"
        kind = "command"
        command = ["/bin/cat"]
        """

    private func config(_ text: String) throws -> RelayConfig { try RelayConfig.parse(text: text, fileName: "relay.toml") }

    private func changes(_ old: String, _ new: String) throws -> [String] {
        ConfigDiff.changes(from: try config(old), to: try config(new)).map(\.description)
    }

    @Test func theSameFileChangesNothing() throws {
        #expect(try changes(Self.base, Self.base) == [])
        let old = try config(Self.base)
        #expect(ConfigDiff.applicable(from: old, to: old).clawline == old.clawline)
    }

    @Test func aLogLevelAndALimitApplyLiveWithTheirValues() throws {
        let new = Self.base.replacingOccurrences(of: #"log_level = "info""#, with: #"log_level = "debug""#)
            .replacingOccurrences(of: #"backend = "echo""#, with: "backend = \"cmd\"\nmax_queued_turns = 3")
        let found = try changes(Self.base, new)
        #expect(
            found == [
                "log_level of [server] changed (info → debug)", "max_queued_turns of [clawline] changed (20 → 3)",
                "backend of [clawline] changed (echo → cmd)",
            ]
        )
        let applied = ConfigDiff.applicable(from: try config(Self.base), to: try config(new))
        #expect(applied.clawline?.maxQueuedMessages == 3 && applied.clawline?.backend == "cmd" && applied.logLevel == "debug")
    }

    @Test func aListenAddressNeedsARestartAndKeepsRunningWhereItWas() throws {
        let new = Self.base.replacingOccurrences(of: "127.0.0.1:18789", with: "127.0.0.1:18790")
        let found = ConfigDiff.changes(from: try config(Self.base), to: try config(new))
        #expect(found.map(\.description) == ["listen of [gateway] changed (127.0.0.1:18789 → 127.0.0.1:18790): needs a restart"])
        #expect(found.allSatisfy { $0.needsRestart })
        #expect(ConfigDiff.applicable(from: try config(Self.base), to: try config(new)).gateway?.port == 18789)
    }

    @Test func aSecretIsNamedButNeverShown() throws {
        let new = Self.base.replacingOccurrences(of: "first-secret-token", with: "second-secret-token")
        let found = try changes(Self.base, new)
        #expect(found == ["shared_token of [gateway] changed"])
        #expect(ConfigDiff.applicable(from: try config(Self.base), to: try config(new)).gateway?.sharedToken == "second-secret-token")
    }

    @Test func backendsAreAddedRemovedAndChangedByNameAndTheDefaultFollowsTheFirst() throws {
        let new = """
            [clawline]
            [gateway]
            listen = "127.0.0.1:18789"
            shared_token = "first-secret-token"
            [companion]
            [server]
            [[backends]]
            name = "two"
            kind = "command"
            command = ["/bin/cat"]
            [[backends]]
            name = "cmd"
            kind = "echo"
            """
        let found = try changes(Self.base, new)
        #expect(
            found == [
                "backend of [clawline] changed (echo → none)", "[[backends]] two added (command)", "[[backends]] cmd changed (command → echo)",
                "[[backends]] echo removed", "the default backend (the first [[backends]]) changed (echo → two)",
            ]
        )
        let applied = ConfigDiff.applicable(from: try config(Self.base), to: try config(new))
        #expect(applied.backends.map(\.name) == ["two", "cmd"])
        #expect(applied.gateway?.backendKinds == ["two": "command", "cmd": "echo"], "the gateway's model catalog follows [[backends]]")
    }

    @Test func aListenerAddedOrRemovedAndTheDataDirectoryNeedARestart() throws {
        let new = Self.base.replacingOccurrences(of: "[companion]\n", with: "[discoclaw]\n")
            .replacingOccurrences(of: "[server]\n", with: "[server]\nevent_loop = \"poll\"\ndata_dir = \"/elsewhere\"\n")
        let found = ConfigDiff.changes(from: try config(Self.base), to: try config(new))
        #expect(
            found.map(\.description) == [
                "event_loop of [server] changed (epoll → poll): needs a restart",
                "data_dir of [server] changed (./.clawrelay → /elsewhere): needs a restart", "[companion] removed: needs a restart",
                "[discoclaw] added: needs a restart",
            ]
        )
        let applied = ConfigDiff.applicable(from: try config(Self.base), to: try config(new))
        #expect(applied.companion != nil && applied.discoClaw == nil && applied.dataDirectory == "./.clawrelay" && applied.eventLoop == .epoll)
    }

    @Test func companionRoutesAndPushApplyLive() throws {
        let new =
            Self.base + """

                [[companion.routes]]
                directory_prefix = "/srv/lib"
                backend = "cmd"
                [push]
                delay_seconds = 30
                """
        let found = ConfigDiff.changes(from: try config(Self.base), to: try config(new))
        #expect(found.map(\.description) == ["routes of [companion] changed (none → /srv/lib: cmd)", "[push] added"])
        #expect(!found.contains { $0.needsRestart })
    }

    @Test func everyKeyAListenerAcceptsIsCompared() {
        func names<Settings>(_ keys: [SettingKey<Settings>]) -> Set<String> { Set(keys.map(\.name)).union(["allow_public"]) }
        #expect(names(ConfigDiff.clawlineKeys) == Set(ConfigDecoder.clawlineKeys))
        #expect(names(ConfigDiff.gatewayKeys) == Set(ConfigDecoder.gatewayKeys))
        #expect(names(ConfigDiff.companionKeys) == Set(ConfigDecoder.companionKeys))
        #expect(names(ConfigDiff.discoClawKeys) == Set(ConfigDecoder.discoClawKeys))
        let push = Set(ConfigDiff.pushKeys.map(\.name)).subtracting(["apns_*"])
        #expect(
            push.union(["apns_key_file", "apns_key_id", "apns_team_id", "apns_topic", "apns_environment", "apns_endpoint"])
                == Set(ConfigDecoder.pushKeys)
        )
    }

    @Test func everyIntegerKeyIsSeenWhenItChanges() {
        func check<Settings>(
            _ section: String,
            _ table: [(key: String, field: WritableKeyPath<Settings, Int>)],
            _ keys: [SettingKey<Settings>],
            _ base: Settings
        ) {
            for (key, field) in table {
                var changed = base
                changed[keyPath: field] += 1
                let found = SettingKey.changes(keys, in: section, from: base, to: changed).map(\.subject)
                #expect(found == ["\(key) of \(section)"])
            }
        }
        check("[clawline]", ConfigDecoder.clawlineIntegers, ConfigDiff.clawlineKeys, ClawlineSettings())
        check("[gateway]", ConfigDecoder.gatewayIntegers, ConfigDiff.gatewayKeys, GatewaySettings())
        check("[companion]", ConfigDecoder.companionIntegers, ConfigDiff.companionKeys, CompanionSettings())
        check("[discoclaw]", ConfigDecoder.discoClawIntegers, ConfigDiff.discoClawKeys, DiscoClawSettings())
    }
}
