import DiscoClawWire
import RelayCore

extension DiscoClawMessage {
    /// A message posted without a `clientId` still needs one inside the relay (idempotency is keyed
    /// by it); this prefix marks the invented ones, which clients never see.
    static let unnamedPrefix = "relay-unnamed:"

    static func unnamedClientID() -> String { unnamedPrefix + Identifiers.newUUID() }

    /// A row of the core's timeline (a message, a running answer's placeholder, a failed answer).
    init(_ entry: TimelineEntry) {
        self.init(
            id: entry.id,
            clientId: entry.clientID.flatMap { $0.hasPrefix(Self.unnamedPrefix) ? nil : $0 },
            conversationId: entry.conversationID,
            role: entry.role.rawValue,
            content: entry.content,
            status: entry.status.rawValue,
            error: entry.error,
            seq: entry.seq,
            createdAt: entry.createdAt,
            completedAt: entry.completedAt
        )
    }
}
