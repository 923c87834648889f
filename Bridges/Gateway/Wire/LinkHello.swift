import RelayKit

/// Who a gateway link says it is in `connect`: an operator account, or a node the relay passes through.
public struct LinkHello: Sendable, Equatable {
    public var role = "operator"
    public var scopes = ["operator.read", "operator.write"]
    public var mode = "backend"
    public var displayName: String
    public var caps: [JSONValue] = []
    public var commands: [String] = []
    public var permissions: JSONValue = .object([:])

    /// An operator account (mode `backend`).
    public init(displayName: String) { self.displayName = displayName }

    /// A node the relay passes through to an upstream gateway.
    public static func node(displayName: String, caps: [JSONValue], commands: [String], permissions: JSONValue) -> LinkHello {
        var hello = LinkHello(displayName: displayName)
        (hello.role, hello.scopes, hello.mode) = ("node", [], "node")
        (hello.caps, hello.commands, hello.permissions) = (caps, commands, permissions)
        return hello
    }

    /// An interactive operator client (`clawrelay chat`): mode `cli`, and it answers tool approvals.
    public static func operatorClient(displayName: String) -> LinkHello {
        var hello = LinkHello(displayName: displayName)
        hello.mode = "cli"
        hello.scopes.append("operator.approvals")
        return hello
    }
}
