import DiscoClawBridge

extension ConfigDecoder {
    /// A `kind = "discoclaw"` backend: `url`, exactly one of `token` and `setup_token`,
    /// `allow_self_signed`, `conversation_title_prefix`.
    static func discoClawBackend(name: String, _ entry: ConfigTable) throws(ConfigError) -> BackendSettings {
        guard let text = try entry.string("url") else {
            throw entry.error(.missingKey, key: "url", #"missing; a discoclaw backend needs url = "http://host:4242""#)
        }
        guard let url = HTTPURL(text) else {
            throw entry.error(
                .invalidValue,
                key: "url",
                "expected http://host:port[/prefix] or https://host:port[/prefix] (no user, query or fragment), got \(quoted(text))"
            )
        }
        let token = try entry.string("token")
        let setupToken = try entry.string("setup_token")
        let credential: DiscoClawCredential
        switch (token, setupToken) {
        case (let token?, nil):
            guard Self.isHeaderSafe(token) else {
                throw entry.error(.invalidValue, key: "token", "must not be empty or hold spaces or control characters")
            }
            credential = .token(token)
        case (nil, let setupToken?):
            guard Self.isHeaderSafe(setupToken) else {
                throw entry.error(.invalidValue, key: "setup_token", "must not be empty or hold spaces or control characters")
            }
            credential = .setupToken(setupToken)
        case (.some, .some):
            throw entry.error(.invalidValue, key: "setup_token", "give token or setup_token, not both")
        case (nil, nil):
            throw entry.error(
                .missingKey,
                key: "token",
                "missing; a discoclaw backend needs token (a device token) or setup_token (to register once)"
            )
        }
        return BackendSettings(
            name: name,
            kind: .discoclaw(
                url: url,
                credential: credential,
                allowSelfSigned: try entry.bool("allow_self_signed") ?? false,
                titlePrefix: try entry.string("conversation_title_prefix")
            )
        )
    }

    /// Non-empty, and nothing that would break a header or a URL query (the token goes in both).
    private static func isHeaderSafe(_ secret: String) -> Bool {
        !secret.isEmpty && !secret.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0 == " " }
    }
}
