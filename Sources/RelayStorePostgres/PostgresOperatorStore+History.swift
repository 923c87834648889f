import Logging
import PostgresNIO
import RelayCore

/// What the operator commands read of the history: conversations, approvals, push attempts.
extension PostgresOperatorStore {
    public func approvals(pendingOnly: Bool, limit: Int) throws -> [ApprovalRow] {
        try run("read the approvals") { connection, logger in
            try await PostgresUsageQueries.approvals(connection, pendingOnly: pendingOnly, limit: limit, logger: logger)
        }
    }

    public func conversations(userID: String?, limit: Int) throws -> [(conversation: Conversation, events: Int)] {
        let rows = try run("read the conversations") { connection, logger -> [ConversationCount] in
            let conversations =
                if let userID {
                    try await PostgresConversationQueries.list(connection, logger, userID: userID, limit: limit)
                } else {
                    try await PostgresConversationQueries.all(connection, logger, limit: limit)
                }
            var rows: [ConversationCount] = []
            for conversation in conversations {
                rows.append(
                    ConversationCount(
                        conversation: conversation,
                        events: try await PostgresEventQueries.count(connection, logger, conversationID: conversation.id)
                    )
                )
            }
            return rows
        }
        return rows.map { ($0.conversation, $0.events) }
    }

    public func conversation(id: String, events limit: Int) throws -> ConversationDetail? {
        try run("read the conversation") { connection, logger -> ConversationDetail? in
            guard let conversation = try await PostgresConversationQueries.fetch(connection, logger, id: id) else { return nil }
            let events = try await PostgresEventQueries.recent(
                connection,
                logger,
                userID: conversation.userID,
                conversationID: id,
                skipping: 0,
                limit: limit,
                byteBudget: .max
            ).events
            let usage = try await PostgresUsageQueries.totals(connection, conversationID: id, logger: logger)
            return ConversationDetail(conversation: conversation, events: events, usage: usage)
        }
    }

    public func bind(conversationID: String, backend: String, at millis: Int64) throws -> Bool {
        try transaction("bind the conversation") { connection, logger in
            try await PostgresConversationQueries.update(connection, logger, id: conversationID) {
                ConversationEdit.rebind(backend: backend).apply(to: &$0, at: millis)
            } != nil
        }
    }

    public func pushAttempts(since: Int64?, deviceID: String?, afterID: Int64, limit: Int, newest: Bool) throws -> [PushAttemptRow] {
        try run("read the push attempts") { connection, logger in
            try await PostgresPushQueries.attempts(
                connection,
                since: since,
                deviceID: deviceID,
                afterID: afterID,
                limit: limit,
                newest: newest,
                logger: logger
            ).map { PushAttemptRow(id: $0.id, userID: $0.userID, attempt: $0.attempt) }
        }
    }
}

/// A conversation and how many events it holds (a tuple is not `Sendable` across the wait).
private struct ConversationCount: Sendable {
    let conversation: Conversation
    let events: Int
}
