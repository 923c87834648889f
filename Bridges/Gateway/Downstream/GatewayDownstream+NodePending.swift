import Foundation
import GatewayWire
import RelayCore

/// `node.pending.pull`, `node.pending.drain` and `node.pending.ack`: a woken node asks for work
/// queued while it slept. The relay queues none (it has no `node.pending.enqueue`), so it answers
/// as OpenClaw's handlers answer an empty queue.
extension GatewayDownstream {
    /// Ids one `node.pending.ack` may name, and how long each may be.
    static let maxAckIDs = 100
    static let maxAckIDBytes = 256

    func handleNodePending(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let nodeID = socket.deviceID
        switch request.method {
        case "node.pending.pull":
            socket.reply(request.id, NodePendingActions(nodeId: nodeID))
        case "node.pending.drain":
            if let maxItems = request.fields["maxItems"], !(maxItems.intValue.map { (1...10).contains($0) } ?? false) {
                return socket.fail(request.id, .invalidMaxItems)
            }
            socket.reply(request.id, NodePendingDrain(nodeId: nodeID))
        default:
            guard let ids = Self.ackIDs(request.fields["ids"]) else { return socket.fail(request.id, .ackIDsRequired) }
            socket.reply(request.id, NodePendingAck(nodeId: nodeID, ackedIds: ids))
        }
    }

    /// The ids, trimmed and each once in the order given; nil unless a non-empty list of non-empty
    /// strings within the bounds.
    static func ackIDs(_ value: JSONValue?) -> [String]? {
        guard let items = value?.arrayValue, !items.isEmpty, items.count <= maxAckIDs else { return nil }
        var ids: [String] = []
        for item in items {
            guard let id = item.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines), !id.isEmpty, id.utf8.count <= maxAckIDBytes else {
                return nil
            }
            if !ids.contains(id) { ids.append(id) }
        }
        return ids
    }
}
