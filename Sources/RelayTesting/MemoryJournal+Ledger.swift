import RelayCore

extension MemoryJournal: TurnLedger {
    /// A turn in the cluster's queue: its conversation, the seq of its user event (the FIFO key),
    /// the node that accepted or runs it, and whether it runs.
    struct LedgerEntry {
        var conversationID: String
        var order: Int64
        var node: NodeIncarnation
        var running: Bool
        /// Handed to `node` (the holder of its account), with the backend it runs on.
        var handed = false
        var backend: String?
    }

    /// Registers an accepted message's turn (`UserMessage.acceptingNode`).
    func register(runID: String, conversationID: String, order: Int64, node: NodeIncarnation, backend: String? = nil) {
        ledger[runID] = LedgerEntry(conversationID: conversationID, order: order, node: node, running: false, backend: backend)
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
                    dead.adopted.append(
                        AdoptedTurn(message: Self.storedMessage(record, event), runID: runID, answer: record.answer, backend: entry.backend)
                    )
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

    public func handOver(
        runID: String,
        from: NodeIncarnation,
        to holder: NodeIncarnation,
        backend: String,
        completion: @escaping (Result<HandOver, any Error>) -> Void
    ) {
        write(completion) {
            guard let entry = ledger[runID], entry.node == from, !deadNodes.contains(from) else { return .notOwned }
            guard !deadNodes.contains(holder) else { return .holderGone }
            ledger[runID] = LedgerEntry(
                conversationID: entry.conversationID,
                order: entry.order,
                node: holder,
                running: false,
                handed: true,
                backend: backend
            )
            return .handed
        }
    }

    public func handedTurns(to node: NodeIncarnation, completion: @escaping (Result<[AdoptedTurn], any Error>) -> Void) {
        write(completion) {
            ledger.sorted { $0.value.order < $1.value.order }.compactMap { runID, entry -> AdoptedTurn? in
                guard entry.node == node, entry.handed, !entry.running,
                    let record = records.values.first(where: { $0.runID == runID }), record.state == .active,
                    let event = events.first(where: { $0.id == record.userEventID })
                else { return nil }
                return AdoptedTurn(message: Self.storedMessage(record, event), runID: runID, answer: record.answer, backend: entry.backend)
            }
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
