import RelayCore
import RelayServer
import Testing

/// The backend `clawrelay conversations` shows for a conversation is the one the turn runner
/// picks: its binding, else the default of the listener it belongs to, else the first backend.
@Suite struct ConversationOwnerConfigTests {
    static let text = """
        [clawline]
        listen = "127.0.0.1:0"
        admin_backend = "admins"

        [gateway]
        listen = "127.0.0.1:0"
        backend = "gw"

        [discoclaw]
        listen = "127.0.0.1:0"
        backend = "disco"

        [companion]
        listen = "127.0.0.1:0"
        backend = "comp"

        [[backends]]
        name = "echo"
        kind = "echo"

        [[backends]]
        name = "admins"
        kind = "echo"

        [[backends]]
        name = "gw"
        kind = "echo"

        [[backends]]
        name = "disco"
        kind = "echo"

        [[backends]]
        name = "comp"
        kind = "echo"
        """

    static func conversation(_ keys: [ConversationKey], user: String = "u", backend: String? = nil) -> Conversation {
        Conversation(id: "cv_1", userID: user, backend: backend, createdAt: 0, updatedAt: 0, keys: keys)
    }

    static func answeredBy(_ conversation: Conversation, _ config: RelayConfig) -> (String?, String) {
        let owner = config.owner(of: conversation)
        return (owner?.listener, config.namesRouter.backendName(for: conversation, policy: owner?.policy ?? TurnPolicy()))
    }

    @Test func eachListenerAnswersItsOwnConversationsWithItsBackend() throws {
        let config = try RelayConfig.parse(text: Self.text, fileName: "relay.toml")
        let cases: [(Conversation, String?, String)] = [
            (Self.conversation([ConversationKey("discoclaw", "x")]), "discoclaw", "disco"),
            (Self.conversation([ConversationKey("companion.dir", "/p"), ConversationKey("companion", "s")]), "companion", "comp"),
            (Self.conversation([.main]), "clawline", "echo"),
            (Self.conversation([.session("admin")], user: "@admins"), "clawline", "admins"),
            (Self.conversation([.session("backend:x:1")]), "gateway", "gw"),
            (Self.conversation([ConversationKey("discoclaw", "x")], backend: "comp"), "discoclaw", "comp"),
            (Self.conversation([]), nil, "echo"),
        ]
        for (conversation, listener, backend) in cases {
            let (owner, name) = Self.answeredBy(conversation, config)
            #expect(owner == listener && name == backend, "\(conversation.keys): \(owner ?? "-") \(name)")
        }
    }

    @Test func theGatewayAnswersTheTimelineWhenClawlineIsOff() throws {
        let text = Self.text.replacingOccurrences(of: "[clawline]\nlisten = \"127.0.0.1:0\"\nadmin_backend = \"admins\"\n", with: "")
        let config = try RelayConfig.parse(text: text, fileName: "relay.toml")
        let (owner, name) = Self.answeredBy(Self.conversation([.main]), config)
        #expect(owner == "gateway" && name == "gw")
    }
}
