import GatewayWire
import RelayCore

/// Who a gateway socket is once its `connect` verified: the device, the role and scopes it asked
/// for and what its client said about itself.
struct GatewayPeer: Equatable, Sendable {
    var deviceID: String
    /// Its raw Ed25519 key, base64url (as pairing records keep it).
    var publicKey: String
    var role: String
    var scopes: Set<String>
    var clientID: String
    var clientMode: String
    var platform: String
    var version: String
    var displayName: String?
    var deviceFamily: String?
    var caps: [JSONValue]
    var commands: [String]
    var permissions: JSONValue
    /// The protocol version agreed (3 or 4).
    var protocolVersion: Int64
    /// The connect presented a device token (only such a socket is shown a token it rotates itself).
    var usedDeviceToken = false
    var connectedAt: Int64 = 0
    /// A node that said it is in the background (an `app.state` event, or NODE_BACKGROUND_UNAVAILABLE).
    var isBackground = false

    var isNode: Bool { role == "node" }

    /// `operator.admin` passes every scope check.
    func has(_ scope: String) -> Bool { scopes.contains(scope) || scopes.contains("operator.admin") }

    /// An operator that may read chat (and so is sent `chat` and `sessions.changed` events).
    var readsChat: Bool { !isNode && (has("operator.read") || has("operator.write")) }

    /// An operator that reviews tool approvals (`operator.approvals`, or admin): it is sent the
    /// `exec.approval.*` and `plugin.approval.*` events and may resolve them.
    var reviewsApprovals: Bool { !isNode && has("operator.approvals") }

    /// It asked for the `agent` event's `tool` stream (`connect.caps` holds `"tool-events"`).
    var wantsToolEvents: Bool { caps.contains(.string("tool-events")) }

    var sortedScopes: [String] { scopes.sorted() }

    var presenceEntry: PresenceEntry {
        PresenceEntry(
            deviceId: deviceID,
            role: role,
            scopes: sortedScopes,
            clientId: clientID,
            mode: clientMode,
            platform: platform,
            ts: connectedAt,
            version: version,
            deviceFamily: deviceFamily,
            host: displayName
        )
    }

    /// The node as `node.list` and `node.describe` show it.
    var nodeEntry: NodeEntry {
        NodeEntry(
            nodeId: deviceID,
            displayName: displayName,
            platform: platform,
            version: version,
            caps: caps,
            commands: commands,
            permissions: permissions,
            connectedAtMs: connectedAt,
            foreground: !isBackground
        )
    }

    /// What a pairing request keeps about the device, and operators are shown.
    func pairingEntry(remoteIP: String) -> PairingRequestEntry {
        PairingRequestEntry(
            deviceId: deviceID,
            publicKey: publicKey,
            displayName: displayName,
            platform: platform,
            clientId: clientID,
            clientMode: clientMode,
            role: role,
            scopes: sortedScopes,
            remoteIp: remoteIP
        )
    }
}
