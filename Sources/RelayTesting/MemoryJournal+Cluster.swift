import RelayCore

extension MemoryJournal: ClusterJournal {
    public func streamEntries(
        _ stream: String,
        after: Int64,
        through: Int64,
        limit: Int,
        completion: @escaping (Result<[StreamEntry], any Error>) -> Void
    ) {
        let range = (after + 1)...max(after + 1, through)
        var entries: [StreamEntry] = events.filter { $0.userID == stream && range.contains($0.seq) }.map { .message($0) }
        for record in records.values where record.userID == stream {
            guard let seq = record.endedSeq, range.contains(seq), let failure = record.failure else { continue }
            entries.append(.failure(failure, seq: seq))
        }
        entries += conversations.values.filter { $0.userID == stream && range.contains($0.changeSeq) }.map { .conversation($0) }
        later(.success(Array(entries.sorted { $0.seq < $1.seq }.prefix(limit))), completion)
    }

    public func streamHeads(_ streams: [String], completion: @escaping (Result<[String: Int64], any Error>) -> Void) {
        later(.success(Dictionary(uniqueKeysWithValues: streams.map { ($0, lastSeq[$0] ?? 0) })), completion)
    }
}

extension MemoryJournal.Record {
    /// How its turn ended without an answer, as a device hears it; nil while it did not.
    var failure: TurnFailure? {
        guard let reason else { return nil }
        return TurnFailure(
            turn: TurnRef(runID: runID, deviceID: deviceID, clientID: clientID),
            conversationID: conversationID,
            userID: userID,
            cause: cause ?? .failed,
            reason: reason,
            timestampMillis: endedAt ?? 0,
            answerID: answer.id
        )
    }
}
