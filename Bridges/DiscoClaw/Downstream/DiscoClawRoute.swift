import Foundation

/// What a request's method and path name, before authentication.
enum DiscoClawRoute: Equatable {
    case health
    case register
    case addDevice
    case listDevices
    case me
    case removeDevice(String)
    case listConversations
    case createConversation
    case conversation(String)
    case updateConversation(String)
    case deleteConversation(String)
    case listMessages(String)
    case postMessage(String)
    case sync

    /// nil: no such route (404).
    init?(method: String, path: String) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map { String($0).removingPercentEncoding ?? String($0) }
        switch (method, parts.first, parts.count) {
        case ("GET", "health", 1): self = .health
        case ("POST", "auth", 2) where parts[1] == "register": self = .register
        case ("POST", "auth", 2) where parts[1] == "devices": self = .addDevice
        case ("GET", "auth", 2) where parts[1] == "devices": self = .listDevices
        case ("GET", "auth", 2) where parts[1] == "me": self = .me
        case ("DELETE", "auth", 3) where parts[1] == "devices": self = .removeDevice(parts[2])
        case ("GET", "conversations", 1): self = .listConversations
        case ("POST", "conversations", 1): self = .createConversation
        case ("GET", "conversations", 2): self = .conversation(parts[1])
        case ("PATCH", "conversations", 2): self = .updateConversation(parts[1])
        case ("DELETE", "conversations", 2): self = .deleteConversation(parts[1])
        case ("GET", "conversations", 3) where parts[2] == "messages": self = .listMessages(parts[1])
        case ("POST", "conversations", 3) where parts[2] == "messages": self = .postMessage(parts[1])
        case ("GET", "sync", 1): self = .sync
        default: return nil
        }
    }

    /// Answered without a token.
    var isPublic: Bool { self == .health || self == .register }
}
