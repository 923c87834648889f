import ClawlineWire
import RelayCore

extension ClawlineChannel {
    /// The shared audience that owns the admin channel's conversation. Not a user id any
    /// protocol issues (Clawline users are UUIDs), so no user's history mixes with it.
    static let adminAudience = "@admins"
    /// The admin channel's conversation, owned by `adminAudience` and answered by
    /// `[clawline] admin_backend`. The personal channel is the user's `session:main` (and every
    /// other conversation of the user, as replay always showed them).
    static let adminKey = ConversationKey.session("admin")

    /// The channel of an event owned by `owner` (the event's user id).
    init(owner: String) { self = owner == Self.adminAudience ? .admin : .personal }
}

extension FastFrames {
    /// A stored event, byte for byte `ServerFrame.Message(event)` encoded.
    static func message(_ event: ChatEvent) -> [UInt8] {
        message(
            id: event.id,
            role: event.role.rawValue,
            content: event.content,
            timestamp: event.timestampMillis,
            deviceId: event.role == .user ? event.deviceID : nil,
            attachments: AttachmentWire.json(event.attachmentsJSON, eventID: event.id),
            channel: ClawlineChannel(owner: event.userID)
        )
    }
}

extension ServerFrame.Message {
    /// The reference encoding of a stored event (`FastFrames.message` writes the same bytes by hand).
    init(_ event: ChatEvent) {
        self.init(
            id: event.id,
            role: event.role.rawValue,
            content: event.content,
            timestamp: event.timestampMillis,
            streaming: false,
            deviceId: event.role == .user ? event.deviceID : nil,
            attachments: AttachmentWire.items(event.attachmentsJSON, eventID: event.id),
            channelType: ClawlineChannel(owner: event.userID)
        )
    }
}
