/// Where an upstream account's connection stands (`clawrelay accounts`, `/metrics`).
public enum LinkState: String, Sendable, CaseIterable {
    case connecting
    case connected
    case retrying
    case awaitingApproval = "awaiting_approval"
    case badCredentials = "bad_credentials"
    /// The upstream refused the account for good (pairing denied, token revoked); the link stays
    /// down until the operator acts and the relay restarts.
    case failed
}
