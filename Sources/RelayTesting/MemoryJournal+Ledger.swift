import RelayCore

extension MemoryJournal: TurnLedger {
    /// A turn in the cluster's queue: its conversation, the seq of its user event (the FIFO key),
    /// the node that accepted or runs it, and whether it runs.
    struct LedgerEntry {
        var conversationID: String
        var order: Int64
        var node: NodeIncarnation
        var running: Bool
    }

    /// Registers an accepted message's turn (`UserMessage.acceptingNode`).
    func register(runID: String, conversationID: String, order: Int64, node: NodeIncarnation) {
        ledger[runID] = LedgerEntry(conversationID: conversationID, order: order, node: node, running: false)
        ledgerRuns.insert(runID)
    }

    /// Refuses a write about a registered turn that is no longer active; releases it otherwise.
    func settle(runID: String, record key: String) throws {
        guard ledgerRuns.contains(runID) else { return }
        guard records[key]?.state == .active else { throw TurnFenced(runID: runID) }
        ledger.removeValue(forKey: runID)
    }

    public func claim(runID: String, conversationID: String, node: NodeIncarnation, completion: @escaping (Result<TurnClaim, any Error>) -> Void) {
        write(completion) {
            guard let record = records.values.first(where: { $0.runID == runID }), record.state == .active else {
                ledger.removeValue(forKey: runID)
                return .ended
            }
            // A node declared dead runs nothing more; a run another node runs is not this one's.
            if deadNodes.contains(node) { return .ended }
            if let entry = ledger[runID], entry.running, entry.node != node { return .ended }
            if ledger[runID] == nil {
                let order = events.first { $0.id == record.userEventID }?.seq ?? 0
                register(runID: runID, conversationID: conversationID, order: order, node: node)
            }
            let lane = ledger.filter { $0.value.conversationID == conversationID }
            if let running = lane.first(where: { $0.value.running }) { return running.key == runID ? .running : .waiting }
            guard let entry = lane[runID], !lane.values.contains(where: { $0.order < entry.order }) else { return .waiting }
            ledger[runID]?.running = true
            ledger[runID]?.node = node
            return .running
        }
    }

    public func withdraw(runID: String) { ledger.removeValue(forKey: runID) }

    public func declareDead(
        _ node: NodeIncarnation,
        survivor: NodeIncarnation,
        reason: String,
        now: Int64,
        completion: @escaping (Result<DeadNodeTurns, any Error>) -> Void
    ) {
        write(completion) {
            deadNodes.insert(node)
            var dead = DeadNodeTurns(failed: [], adopted: [])
            for (runID, entry) in ledger.sorted(by: { $0.value.order < $1.value.order }) where entry.node == node {
                guard let (key, record) = records.first(where: { $0.value.runID == runID }), record.state == .active else {
                    ledger.removeValue(forKey: runID)
                    continue
                }
                if !entry.running, let event = events.first(where: { $0.id == record.userEventID }) {
                    ledger[runID]?.node = survivor
                    dead.adopted.append(AdoptedTurn(message: Self.storedMessage(record, event), runID: runID, answer: record.answer))
                    continue
                }
                ledger.removeValue(forKey: runID)
                let seq = nextSeq(record.userID)
                records[key]?.state = .failed
                records[key]?.reason = reason
                records[key]?.endedSeq = seq
                records[key]?.endedAt = now
                records[key]?.cause = .failed
                if let failure = records[key]?.failure { dead.failed.append((failure, seq)) }
            }
            return dead
        }
    }

    /// The message a record and its user event hold, as it was accepted.
    private static func storedMessage(_ record: Record, _ event: ChatEvent) -> UserMessage {
        var message = UserMessage(
            conversationID: record.conversationID,
            userID: record.userID,
            senderID: event.userID,
            deviceID: record.deviceID,
            clientID: record.clientID,
            runID: record.runID,
            content: event.content,
            attachmentsJSON: event.attachmentsJSON,
            attachmentsHash: record.message.attachmentsHash
        )
        message.receivedAt = 0
        return message
    }
}
