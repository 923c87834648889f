import RelayCore

extension MemoryJournal: NodePresenceJournal {
    public func recordPresence(deviceID: String, on node: NodeIncarnation, state: DevicePresence.State, now: Int64) {
        if state == .offline {
            nodePresence[deviceID]?.removeValue(forKey: node)
        } else {
            nodePresence[deviceID, default: [:]][node] = state
        }
    }

    /// Nodes declared dead (`declareDead`) do not count, as buried ones do not in PostgreSQL.
    public func clusterPresence(deviceID: String, completion: @escaping (Result<DevicePresence.State, any Error>) -> Void) {
        let live = (nodePresence[deviceID] ?? [:]).filter { !deadNodes.contains($0.key) }
        later(.success(.mostPresent(live.values)), completion)
    }
}
