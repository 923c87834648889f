import Foundation
import GatewayWire
import RelayCore

/// The routing identity native apps check before flushing queued messages: `agents.list` (the
/// relay as its one agent, `main`), `agent.identity.get`, and `chat.send`'s
/// `expectedSessionRoutingContract`, refused when it is not the relay's (`SessionRouting.relay`).
extension GatewayDownstream {
    static let routing = SessionRouting.relay

    func handleAgents(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let routing = Self.routing
        guard request.method == "agent.identity.get" else {
            return socket.reply(request.id, AgentsList(routing: routing, name: settings.name))
        }
        let fields = request.fields
        if let agent = fields["agentId"], agent.stringValue?.lowercased() != routing.defaultAgentID {
            return socket.fail(request.id, .unknownAgent(agent.stringValue ?? ""))
        }
        if let key = fields["sessionKey"] {
            guard let text = key.stringValue else { return socket.fail(request.id, .sessionKeyNotString) }
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            if parts.count >= 3, parts[0] == "agent", parts[1].lowercased() != routing.defaultAgentID {
                return socket.fail(request.id, .unknownAgent(String(parts[1])))
            }
        }
        socket.reply(request.id, AgentIdentity(agentId: routing.defaultAgentID, name: settings.name))
    }

    /// Why a `chat.send` is refused for its routing contract, or nil: none given (live sends may
    /// leave it out), or the relay's.
    static func routingRefusal(_ fields: [String: JSONValue]) -> GatewayError? {
        switch fields["expectedSessionRoutingContract"] {
        case nil, .null?: return nil
        case .string(let expected)?:
            let trimmed = expected.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty || routing.matches(trimmed) ? nil : .sessionRoutingChanged
        default: return .routingContractNotString
        }
    }
}
