import RelayCore

extension MemoryJournal: HistoryJournal {
    public func replay(audiences: [String], after cursor: String?, limit: Int, completion: @escaping (Result<ReplayWindow, any Error>) -> Void) {
        let audienceSet = Set(audiences)
        var highWater: [String: Int64] = [:]
        for audience in audiences { highWater[audience] = events.filter { $0.userID == audience }.map(\.seq).max() ?? 0 }
        // Events are kept in insertion order, which is what merges the audiences' histories.
        let cursorIndex = cursor.flatMap { id in events.firstIndex { $0.id == id && audienceSet.contains($0.userID) } }
        let candidates = events.enumerated().filter { index, event in
            audienceSet.contains(event.userID) && cursorIndex.map { index > $0 } ?? true
        }.map(\.element)
        let window = ReplayWindow(
            events: Array(candidates.suffix(limit)),
            truncated: candidates.count > limit,
            historyReset: cursorIndex == nil,
            highWater: highWater
        )
        later(.success(window), completion)
    }

    public func recentEvents(
        userID: String,
        conversationID: String,
        skipping: Int,
        limit: Int,
        byteBudget: Int,
        completion: @escaping (Result<RecentEvents, any Error>) -> Void
    ) {
        var newest: [ChatEvent] = []
        var bytes = 0
        var cut = false
        let older = events.reversed().filter { $0.userID == userID && $0.conversationID == conversationID }.dropFirst(skipping)
        for event in older {
            bytes += event.content.utf8.count + (event.attachmentsJSON?.utf8.count ?? 0)
            guard newest.count < limit, newest.isEmpty || bytes <= byteBudget else {
                cut = true
                break
            }
            newest.append(event)
        }
        later(.success(RecentEvents(events: newest.reversed(), hasMore: cut)), completion)
    }

    public func event(id: String, completion: @escaping (Result<ChatEvent?, any Error>) -> Void) {
        later(.success(events.first { $0.id == id }), completion)
    }

    /// Stored events, placeholders of running answers and failed answers, as the SQL timeline has them.
    func timeline(userID: String, conversationID: String? = nil) -> [TimelineEntry] {
        var entries: [TimelineEntry] = []
        let clientIDs = Dictionary(records.values.map { ($0.userEventID, $0.clientID) }, uniquingKeysWith: { first, _ in first })
        for event in events where event.userID == userID && (conversationID == nil || event.conversationID == conversationID) {
            entries.append(
                TimelineEntry(
                    id: event.id,
                    clientID: clientIDs[event.id],
                    conversationID: event.conversationID,
                    role: event.role,
                    content: event.content,
                    status: .complete,
                    seq: event.seq,
                    createdAt: event.timestampMillis,
                    completedAt: event.timestampMillis
                )
            )
        }
        for record in records.values where record.userID == userID && (conversationID == nil || record.conversationID == conversationID) {
            if record.state == .active {
                entries.append(
                    TimelineEntry(
                        id: record.answer.id,
                        conversationID: record.conversationID,
                        role: .assistant,
                        content: "",
                        status: .pending,
                        seq: record.answer.seq,
                        createdAt: record.createdAt
                    )
                )
            }
            if let endedSeq = record.endedSeq {
                entries.append(
                    TimelineEntry(
                        id: record.answer.id,
                        conversationID: record.conversationID,
                        role: .assistant,
                        content: "",
                        status: .error,
                        error: record.reason,
                        seq: endedSeq,
                        createdAt: record.createdAt,
                        completedAt: record.endedAt
                    )
                )
            }
        }
        return entries.sorted { $0.seq < $1.seq }
    }

    public func timelinePage(
        userID: String,
        conversationID: String,
        before seq: Int64?,
        limit: Int,
        byteBudget: Int,
        completion: @escaping (Result<TimelinePage, any Error>) -> Void
    ) {
        let older = timeline(userID: userID, conversationID: conversationID).filter { $0.seq < seq ?? .max }
        var newest: [TimelineEntry] = []
        var bytes = 0
        for entry in older.reversed().prefix(limit) {
            guard newest.isEmpty || bytes + entry.content.utf8.count <= byteBudget else { break }
            newest.append(entry)
            bytes += entry.content.utf8.count
        }
        later(.success(TimelinePage(entries: newest.reversed(), hasMore: older.count > newest.count)), completion)
    }

    public func timelineSync(
        userID: String,
        after seq: Int64,
        limit: Int,
        byteBudget: Int,
        completion: @escaping (Result<TimelineSync, any Error>) -> Void
    ) {
        var entries: [TimelineEntry] = []
        var bytes = 0
        var more = false
        for entry in timeline(userID: userID) where entry.seq > seq {
            guard entries.count < limit, entries.isEmpty || bytes + entry.content.utf8.count <= byteBudget else {
                more = true
                break
            }
            entries.append(entry)
            bytes += entry.content.utf8.count
        }
        var changed = conversations.values.filter { $0.userID == userID && $0.changeSeq > seq }.sorted { $0.changeSeq < $1.changeSeq }
        var included = Set(changed.map(\.id))
        for id in entries.map(\.conversationID) where included.insert(id).inserted {
            if let conversation = conversations[id] { changed.append(conversation) }
        }
        later(.success(TimelineSync(entries: entries, more: more, conversations: changed)), completion)
    }

    public func lastEvents(conversationIDs: [String], completion: @escaping (Result<[String: ChatEvent], any Error>) -> Void) {
        var last: [String: ChatEvent] = [:]
        for id in conversationIDs { last[id] = events.last { $0.conversationID == id } }
        later(.success(last), completion)
    }

    public func eventCount(conversationID: String, completion: @escaping (Result<Int, any Error>) -> Void) {
        later(.success(events.count { $0.conversationID == conversationID }), completion)
    }

    public func message(deviceID: String, clientID: String, completion: @escaping (Result<StoredMessage?, any Error>) -> Void) {
        let stored = records["\(deviceID)|\(clientID)"].flatMap { record -> StoredMessage? in
            guard let event = events.first(where: { $0.id == record.userEventID }) else { return nil }
            let message = MessageRecord(
                deviceID: record.deviceID,
                clientID: record.clientID,
                contentHash: record.message.contentHash,
                attachmentsHash: record.message.attachmentsHash,
                state: record.state,
                userEventID: record.userEventID,
                assistantEventID: record.answer.id,
                runID: record.runID,
                reason: record.reason,
                answerSeq: record.answer.seq,
                userID: record.userID,
                conversationID: record.conversationID
            )
            return StoredMessage(record: message, event: event)
        }
        later(.success(stored), completion)
    }

    public func mentions(assetID: String, audience: String, completion: @escaping (Result<Bool, any Error>) -> Void) {
        let needle = String(JSONValue.object(["assetId": .string(assetID)]).encoded().dropFirst().dropLast())
        later(.success(events.contains { $0.userID == audience && ($0.attachmentsJSON?.contains(needle) ?? false) }), completion)
    }

    func summary(of conversation: Conversation, userID: String) -> ConversationSummary {
        let held = events.filter { $0.conversationID == conversation.id }
        let read = cursor(userID: userID, conversationID: conversation.id)
        return ConversationSummary(
            conversation: conversation,
            lastEvent: held.last,
            lastReadSeq: read,
            unreadCount: held.count { $0.seq > read && $0.role == .assistant },
            messageCount: held.count
        )
    }

    public func summaries(userID: String, limit: Int, completion: @escaping (Result<[ConversationSummary], any Error>) -> Void) {
        later(.success(list(userID: userID).prefix(limit).map { summary(of: $0, userID: userID) }), completion)
    }

    public func summary(conversationID: String, userID: String, completion: @escaping (Result<ConversationSummary?, any Error>) -> Void) {
        later(.success(conversations[conversationID].map { summary(of: $0, userID: userID) }), completion)
    }
}
