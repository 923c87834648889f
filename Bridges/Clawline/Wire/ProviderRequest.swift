import RelayCore

/// The frames the relay's upstream account sends a Clawline provider, exactly the client's JSON.
///
/// - Important: `auth` carries the account's token: it is never logged, and the audit redacts
///   it (the `token` key) like every secret.
enum ProviderRequest {
    struct DeviceInfo: Encodable, Equatable {
        var platform = "linux"
        var model = "clawrelay"
        var appVersion = RelayVersion.current
    }

    struct PairRequest: Encodable {
        var type = "pair_request"
        var protocolVersion = 1
        var deviceId: String
        var claimedName: String
        var deviceInfo = DeviceInfo()
    }

    struct Auth: Encodable {
        var type = "auth"
        var protocolVersion = 1
        var token: String
        var deviceId: String
        /// Left out before the first stored event (the provider then sends the tail of history).
        var lastMessageId: String?
    }

    struct Message: Encodable {
        var type = "message"
        var id: String
        var content: String
    }

    static func pairRequest(deviceID: String, claimedName: String) -> String {
        FrameEncoder.encode(PairRequest(deviceId: deviceID, claimedName: claimedName))
    }

    static func auth(token: String, deviceID: String, lastMessageID: String?) -> String {
        FrameEncoder.encode(Auth(token: token, deviceId: deviceID, lastMessageId: lastMessageID))
    }

    static func message(id: String, content: String) -> String {
        FrameEncoder.encode(Message(id: id, content: content))
    }

    /// A new client message id, `c_<uuid>`.
    static func newMessageID() -> String { "c_" + Identifiers.newUUID() }
}
