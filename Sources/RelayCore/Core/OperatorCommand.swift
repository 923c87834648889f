/// A request from the CLI to the running relay, carried through the database.
public struct OperatorCommand: Sendable, Equatable {
    public enum Action: String, Sendable {
        case approve
        case deny
        case revoke
        /// The device's record changed; bridges re-read it.
        case refresh
        /// Binds a conversation (`device_id` holds its id) to a backend (`user_id` holds its name).
        case bindConversation = "bind-conversation"
    }

    public var id: Int64
    public var action: Action
    public var deviceID: String
    public var userID: String?

    public init(id: Int64, action: Action, deviceID: String, userID: String?) {
        self.id = id
        self.action = action
        self.deviceID = deviceID
        self.userID = userID
    }
}
