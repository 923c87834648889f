import RelayCore

/// Who a gateway link says it is in `connect`: an operator account, or a node the relay passes through.
public struct LinkHello: Sendable, Equatable {
    var role = "operator"
    var scopes = ["operator.read", "operator.write"]
    var mode = "backend"
    var displayName: String
    var caps: [JSONValue] = []
    var commands: [String] = []
    var permissions: JSONValue = .object([:])

    /// An interactive operator client (`clawrelay chat`): mode `cli`.
    public static func operatorClient(displayName: String) -> LinkHello {
        var hello = LinkHello(displayName: displayName)
        hello.mode = "cli"
        return hello
    }
}
