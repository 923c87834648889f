import RelayCore

/// The app's two channels (`channelType`; absent means personal).
///
/// `personal` is the user's own timeline (conversation `session:main` of the user, and every
/// other conversation of the user, as replay always showed them). `admin` is one conversation
/// shared by every admin device of the relay, owned by the audience `@admins` and answered by
/// `[clawline] admin_backend`.
enum ClawlineChannel: String, Sendable {
    case personal
    case admin

    /// The shared audience that owns the admin channel's conversation. Not a user id any
    /// protocol issues (Clawline users are UUIDs), so no user's history mixes with it.
    static let adminAudience = "@admins"
    static let adminKey = ConversationKey.session("admin")

    /// The channel of an event owned by `owner` (the event's user id).
    init(owner: String) { self = owner == Self.adminAudience ? .admin : .personal }
}
