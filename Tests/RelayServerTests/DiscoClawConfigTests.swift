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

    @Test func otherPeopleGetSetupTokensOfTheirOwn() throws {
        let config = try RelayConfig.parse(
            text: """
                [discoclaw]
                setup_token = "0123456789abcdef"

                [[discoclaw.users]]
                setup_token = "bob-0123456789abcdef"
                user_id = "bob"

                [[discoclaw.users]]
                setup_token = "carol-0123456789abcdef"
                user_id = "carol"
                """,
            fileName: "relay.toml"
        )
        #expect(config.discoClaw?.users.map(\.userID) == ["bob", "carol"])
        #expect(config.discoClaw?.users.first?.setupToken == "bob-0123456789abcdef")
        #expect(config.discoClaw?.userID == nil)
        let person = "[discoclaw]\nsetup_token = \"0123456789abcdef\"\n\n[[discoclaw.users]]\n"
        expectRejection(
            person + "user_id = \"bob\"\n",
            .missingKey,
            "relay.toml:4: [[discoclaw.users]] setup_token: every [[discoclaw.users]] entry needs"
        )
        expectRejection(person + "setup_token = \"bob-0123456789abcdef\"\n", .missingKey, "relay.toml:4: [[discoclaw.users]] user_id:")
        expectRejection(
            person + "setup_token = \"short\"\nuser_id = \"bob\"\n",
            .invalidValue,
            "relay.toml:5: [[discoclaw.users]] setup_token: needs at least 16"
        )
        expectRejection(
            person + "setup_token = \"0123456789abcdef\"\nuser_id = \"bob\"\n",
            .invalidValue,
            "relay.toml:5: [[discoclaw.users]] setup_token: is already another user's setup token"
        )
        expectRejection(person + "token = \"x\"\n", .unknownKey, "relay.toml:5: [[discoclaw.users]] token:")
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
