import CompanionBridge
import DiscoClawBridge
import RelayServer
import Testing

@Suite struct DiscoClawConfigTests {
    @Test func discoClawSectionDecodes() throws {
        let config = try RelayConfig.parse(
            text: """
                [discoclaw]
                listen = "127.0.0.1:0"
                setup_token = "0123456789abcdef"
                user_id = "alice"
                max_devices_per_user = 3

                [[backends]]
                name = "echo"
                kind = "echo"
                """,
            fileName: "relay.toml"
        )
        var expected = DiscoClawSettings()
        expected.port = 0
        expected.setupToken = "0123456789abcdef"
        expected.userID = "alice"
        expected.maxDevicesPerUser = 3
        #expect(config.discoClaw == expected)
    }

    @Test func discoClawMistakesNameTheKey() {
        expectRejection(
            "[discoclaw]\nsetup_token = \"short\"\n",
            .invalidValue,
            "relay.toml:2: [discoclaw] setup_token: needs at least 16 characters"
        )
        expectRejection("[discoclaw]\nbackend = \"nope\"\n", .unknownBackend, "relay.toml:2: [discoclaw] backend: no backend named")
        expectRejection("[discoclaw]\nlisten = \"0.0.0.0:4242\"\n", .publicBind, "relay.toml:2: [discoclaw] listen:")
        expectRejection("[discoclaw]\nsetup = 1\n", .unknownKey, "relay.toml:2: [discoclaw] setup:")
    }

    @Test func companionRoutesPickTheLongestPrefix() throws {
        let config = try RelayConfig.parse(
            text: """
                [companion]
                listen = "127.0.0.1:0"

                [[companion.routes]]
                directory_prefix = "/srv"
                backend = "a"

                [[companion.routes]]
                directory_prefix = "/srv/site/"
                backend = "b"

                [[backends]]
                name = "a"
                kind = "echo"

                [[backends]]
                name = "b"
                kind = "echo"
                """,
            fileName: "relay.toml"
        )
        let settings = try #require(config.companion)
        #expect(settings.routes.map(\.backend) == ["a", "b"])
        #expect(settings.backend(forDirectory: "/srv/site/docs") == "b")
        #expect(settings.backend(forDirectory: "/srv/site") == "b")
        #expect(settings.backend(forDirectory: "/srv/sites") == "a", "a prefix matches whole folder names only")
        #expect(settings.backend(forDirectory: "/home/me") == nil)
        expectRejection(
            "[companion]\n\n[[companion.routes]]\ndirectory_prefix = \"relative\"\nbackend = \"echo\"\n",
            .missingKey,
            "relay.toml:4: [[companion.routes]] directory_prefix:"
        )
    }
}
