import RelayServer
import Testing

@Suite struct ClawlineBackendConfigTests {
    @Test func clawlineBackendKeysAndDefaults() throws {
        let config = try RelayConfig.parse(
            text: """
                [[backends]]
                name = "home"
                kind = "clawline"
                url = "ws://192.168.1.20:18800/ws"

                [[backends]]
                name = "office"
                kind = "clawline"
                url = "wss://relay.office:443/ws"
                device_name = "clawrelay in the lab"
                allow_self_signed = true
                """,
            fileName: "relay.toml"
        )
        #expect(config.backends.map(\.kindName) == ["clawline", "clawline"])
        guard case .clawline(let url, let name, let selfSigned) = config.backends.first?.kind else {
            Issue.record("not a clawline backend: \(config.backends)")
            return
        }
        #expect(url == WebSocketURL("ws://192.168.1.20:18800/ws") && !url.tls && url.path == "/ws")
        #expect(name == "clawrelay" && !selfSigned)
        #expect(
            config.backends.last?.kind
                == .clawline(url: try #require(WebSocketURL("wss://relay.office:443/ws")), deviceName: "clawrelay in the lab", allowSelfSigned: true)
        )
    }

    @Test func clawlineBackendRules() {
        expectRejection(
            "[[backends]]\nname = \"up\"\nkind = \"clawline\"\n",
            .missingKey,
            #"relay.toml:1: [[backends]] url: missing; a clawline backend needs url = "ws://host:18800/ws""#
        )
        expectRejection(
            "[[backends]]\nname = \"up\"\nkind = \"clawline\"\nurl = \"http://h:1/ws\"\n",
            .invalidValue,
            "relay.toml:4: [[backends]] url: expected ws://host:port[/path]"
        )
        expectRejection(
            "[[backends]]\nname = \"up\"\nkind = \"clawline\"\nurl = \"ws://h:1/ws\"\ndevice_name = \"\"\n",
            .invalidValue,
            "relay.toml:5: [[backends]] device_name: needs 1 to 64 bytes"
        )
        expectRejection(
            "[[backends]]\nname = \"up\"\nkind = \"clawline\"\nurl = \"ws://h:1/ws\"\ndevice_name = \"\(String(repeating: "é", count: 33))\"\n",
            .invalidValue,
            "relay.toml:5: [[backends]] device_name: needs 1 to 64 bytes"
        )
        expectRejection(
            "[[backends]]\nname = \"up\"\nkind = \"clawline\"\nurl = \"ws://h:1/ws\"\ntoken = \"t\"\n",
            .invalidValue,
            #"relay.toml:5: [[backends]] token: applies only to kind = "companion""#
        )
        expectRejection(
            "[[backends]]\nname = \"up\"\nkind = \"companion\"\nurl = \"ws://h:1/ws\"\ntoken = \"t\"\ndevice_name = \"x\"\n",
            .invalidValue,
            #"relay.toml:6: [[backends]] device_name: applies only to kind = "clawline""#
        )
        expectRejection(
            "[[backends]]\nname = \"up\"\nkind = \"openclaw\"\n",
            .missingKey,
            #"relay.toml:1: [[backends]] url: missing; an openclaw backend needs url = "ws://host:18789""#
        )
    }
}
