import Foundation
import RelayPush
import RelayServer
import Testing

@Suite struct PushConfigTests {
    static let apns = """
        [push]
        apns_key_file = "AuthKey.p8"
        apns_key_id = "ABC123DEFG"
        apns_team_id = "TEAM123456"
        apns_topic = "com.example.app"

        """

    @Test func apnsWithWebhooksAndTiming() throws {
        let text =
            Self.apns + """
                apns_environment = "sandbox"
                delay_seconds = 30
                quiet_hours = "22:00-07:00"
                timezone = "Europe/Berlin"
                ntfy_url = "https://ntfy.example.com"
                ntfy_token = "tk_secret"

                [[push.webhooks]]
                url = "https://hooks.example.com/a"
                secret = "0123456789abcdef"

                [[push.webhooks]]
                url = "http://127.0.0.1:9/b"
                secret = "fedcba9876543210"
                """
        let push = try #require(try RelayConfig.parse(text: text, fileName: "relay.toml").push)
        #expect(
            push.apns
                == PushSettings.APNs(
                    keyFile: "AuthKey.p8",
                    keyID: "ABC123DEFG",
                    teamID: "TEAM123456",
                    topic: "com.example.app",
                    endpoint: PushSettings.APNs.sandbox
                )
        )
        #expect(push.delaySeconds == 30 && push.quietHours == "22:00-07:00" && push.timezone == "Europe/Berlin")
        #expect(push.ntfyURL == "https://ntfy.example.com" && push.ntfyToken == "tk_secret")
        #expect(push.webhooks.map(\.url) == ["https://hooks.example.com/a", "http://127.0.0.1:9/b"])
    }

    @Test func defaultsWithoutAPNs() throws {
        let push = try #require(try RelayConfig.parse(text: "[push]\n", fileName: "relay.toml").push)
        #expect(push.apns == nil && push.delaySeconds == 0 && push.ntfyURL == "https://ntfy.sh" && push.webhooks.isEmpty)
        #expect(try RelayConfig.parse(text: "[admin]\n", fileName: "relay.toml").push == nil)
    }

    @Test func apnsNeedsAllFourKeys() {
        expectRejection(
            "[push]\napns_key_file = \"k.p8\"\napns_key_id = \"ABC123DEFG\"\n",
            .missingKey,
            "relay.toml:1: [push] apns_team_id: APNs needs apns_key_file"
        )
    }

    @Test func badValues() {
        expectRejection(
            Self.apns + "apns_environment = \"staging\"\n",
            .invalidValue,
            "relay.toml:6: [push] apns_environment: expected production or sandbox"
        )
        expectRejection(
            Self.apns + "apns_endpoint = \"http://apns\"\n",
            .invalidValue,
            "relay.toml:6: [push] apns_endpoint: APNs is only reached over https://"
        )
        expectRejection("[push]\ndelay_seconds = 90000\n", .invalidValue, "relay.toml:2: [push] delay_seconds: at most 86400")
        expectRejection("[push]\ndelay_seconds = -1\n", .invalidValue, "relay.toml:2: [push] delay_seconds: expected a non-negative integer")
        expectRejection("[push]\nquiet_hours = \"10pm-7am\"\n", .invalidValue, "relay.toml:2: [push] quiet_hours: expected HH:MM-HH:MM")
        expectRejection("[push]\ntimezone = \"Mars/Olympus\"\n", .invalidValue, "relay.toml:2: [push] timezone: unknown time zone")
        expectRejection("[push]\nntfy_url = \"ntfy.sh\"\n", .invalidValue, "relay.toml:2: [push] ntfy_url: expected an http:// or https:// URL")
        expectRejection("[push]\ncolour = 1\n", .unknownKey, "relay.toml:2: [push] colour: unknown key")
        expectRejection("[[push.webhooks]]\nurl = \"https://x\"\nsecret = \"short\"\n", .missingKey, "relay.toml")
        expectRejection("[[push.webhooks]]\nsecret = \"0123456789abcdef\"\n", .missingKey, "relay.toml")
    }
}
