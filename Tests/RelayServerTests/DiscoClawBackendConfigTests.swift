import DiscoClawBridge
import RelayServer
import Testing

@Suite struct DiscoClawBackendConfigTests {
    func backend(_ keys: String) -> String { "[[backends]]\nname = \"disco\"\nkind = \"discoclaw\"\n" + keys }

    @Test func aDiscoClawBackendDecodes() throws {
        let config = try RelayConfig.parse(
            text: backend(
                """
                url = "https://claw.example:4443/api/"
                setup_token = "s3tup"
                allow_self_signed = true
                conversation_title_prefix = "relay: "
                """
            ),
            fileName: "relay.toml"
        )
        guard case .discoclaw(let url, let credential, let allowSelfSigned, let prefix) = config.backends.first?.kind else {
            Issue.record("discoclaw backend not parsed: \(config.backends)")
            return
        }
        #expect(url.tls && url.host == "claw.example" && url.port == 4443 && url.prefix == "/api")
        #expect(url.description == "https://claw.example:4443/api")
        #expect(credential == .setupToken("s3tup") && allowSelfSigned && prefix == "relay: ")
        #expect(config.backends.first?.kindName == "discoclaw")
        #expect("\(credential)" == "setup_token", "a credential never prints its secret")

        let plain = try RelayConfig.parse(text: backend("url = \"http://127.0.0.1\"\ntoken = \"abc\"\n"), fileName: "relay.toml")
        guard case .discoclaw(let url, .token("abc"), false, nil) = plain.backends.first?.kind else {
            Issue.record("token backend not parsed: \(plain.backends)")
            return
        }
        #expect(url.port == 80 && url.prefix == "" && url.description == "http://127.0.0.1:80")
    }

    @Test func exactlyOneCredentialAndAnHTTPURL() {
        expectRejection(backend("url = \"http://h:1\"\n"), .missingKey, "relay.toml:1: [[backends]] token: missing; a discoclaw backend needs token")
        expectRejection(
            backend("url = \"http://h:1\"\ntoken = \"a\"\nsetup_token = \"b\"\n"),
            .invalidValue,
            "relay.toml:6: [[backends]] setup_token: give token or setup_token, not both"
        )
        expectRejection(backend("token = \"a\"\n"), .missingKey, "relay.toml:1: [[backends]] url: missing")
        expectRejection(backend("url = \"ws://h:1\"\ntoken = \"a\"\n"), .invalidValue, "relay.toml:4: [[backends]] url: expected http://host:port")
        expectRejection(
            backend("url = \"http://u:p@h:1\"\ntoken = \"a\"\n"),
            .invalidValue,
            "relay.toml:4: [[backends]] url: expected http://host:port"
        )
        expectRejection(backend("url = \"http://h:1/?token=x\"\ntoken = \"a\"\n"), .invalidValue, "relay.toml:4: [[backends]] url: expected")
        expectRejection(backend("url = \"http://h:1\"\ntoken = \"\"\n"), .invalidValue, "relay.toml:5: [[backends]] token: must not be empty")
        expectRejection(backend("url = \"http://h:1\"\ntoken = \"a b\"\n"), .invalidValue, "relay.toml:5: [[backends]] token: must not be empty")
        expectRejection(
            backend("url = \"http://h:1\"\ntoken = \"a\"\nworking_directory = \"/x\"\n"),
            .invalidValue,
            #"relay.toml:6: [[backends]] working_directory: applies only to kind = "companion""#
        )
        expectRejection(
            "[[backends]]\nname = \"c\"\nkind = \"companion\"\nurl = \"ws://h:1/ws\"\ntoken = \"t\"\nsetup_token = \"s\"\n",
            .invalidValue,
            #"relay.toml:6: [[backends]] setup_token: applies only to kind = "discoclaw""#
        )
    }

    @Test func httpURLsParse() {
        #expect(HTTPURL("http://[::1]:4242")?.description == "http://[::1]:4242")
        #expect(HTTPURL("HTTPS://h")?.port == 443)
        #expect(HTTPURL("http://h:99999") == nil)
        #expect(HTTPURL("http://") == nil)
        #expect(HTTPURL("http://h:1#frag") == nil)
    }
}
