/// The app's two channels (`channelType`; absent means personal).
///
/// `personal` is the user's own timeline. `admin` is one conversation shared by every admin
/// device of the relay (the bridge maps it onto the core).
public enum ClawlineChannel: String, Codable, Sendable {
    case personal
    case admin
}
