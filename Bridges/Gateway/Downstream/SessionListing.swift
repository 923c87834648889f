import Foundation
import GatewayWire
import RelayCore

/// How `sessions.list` and `sessions.changed` show a conversation of any protocol: its key, a
/// readable name, a preview of the newest message and the user's unread count.
enum SessionListing {
    /// Keys of conversations that have no gateway session key: `cv:<conversation id>`.
    static let conversationPrefix = "cv:"
    /// Characters of the newest message a listing shows.
    static let previewLength = 120
    /// Conversations `sessions.list` returns at most.
    static let maxSessions = 500

    /// The conversation's gateway session key, else `cv:<id>` (which every chat method accepts).
    static func key(of conversation: Conversation) -> String {
        conversation.key(in: "session") ?? conversationPrefix + conversation.id
    }

    /// The conversation id a `cv:` key names, nil for any other key.
    static func conversationID(inKey key: String) -> String? {
        guard key.hasPrefix(conversationPrefix) else { return nil }
        return String(key.dropFirst(conversationPrefix.count))
    }

    /// Its title; else its session key, its working directory's last part, or a short form of its id.
    static func displayName(of conversation: Conversation) -> String {
        if let title = conversation.title?.trimmingCharacters(in: .whitespacesAndNewlines), !title.isEmpty { return title }
        if let key = conversation.key(in: "session") { return key }
        if let directory = conversation.workingDirectory?.split(separator: "/").last { return String(directory) }
        return "conversation " + conversation.id.replacingOccurrences(of: "cv_", with: "").prefix(8)
    }

    /// The first `previewLength` characters of a message on one line: its lines, trimmed and
    /// without the blank ones, joined by one space.
    static func preview(_ text: String) -> String {
        // A pasted file can be megabytes: only its start can reach the preview.
        let lines = text.prefix(previewLength * 8).split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        return String(lines.filter { !$0.isEmpty }.joined(separator: " ").prefix(previewLength))
    }

    /// When the conversation last changed: its own change time or its newest message's.
    static func updatedAt(_ summary: ConversationSummary) -> Int64 {
        max(summary.conversation.updatedAt, summary.lastEvent?.timestampMillis ?? 0)
    }

    /// One entry of `sessions.list`, and the row `sessions.changed` carries.
    static func entry(_ summary: ConversationSummary, backend: String, backendKind: String?) -> SessionEntry {
        let conversation = summary.conversation
        var entry = SessionEntry(key: key(of: conversation))
        entry.sessionId = conversation.id
        entry.kind = "direct"
        entry.displayName = displayName(of: conversation)
        entry.backend = backend
        entry.backendKind = backendKind
        entry.updatedAt = updatedAt(summary)
        entry.lastMessagePreview = summary.lastEvent.map { preview($0.content) }
        entry.lastMessageRole = summary.lastEvent?.role.rawValue
        entry.lastSeq = summary.lastEvent?.seq ?? 0
        entry.lastReadSeq = summary.lastReadSeq
        entry.unreadCount = Int64(summary.unreadCount)
        entry.messageCount = Int64(summary.messageCount)
        entry.archived = conversation.archived
        entry.archivedAt = conversation.archivedAt
        entry.label = conversation.title
        settings(of: conversation, into: &entry)
        entry.unread = conversation.settings.markedUnread || summary.unreadCount > 0
        entry.modelProvider = backendKind
        entry.model = backend
        return entry
    }

    /// The user's settings of the conversation, as OpenClaw's row fields.
    private static func settings(of conversation: Conversation, into entry: inout SessionEntry) {
        let settings = conversation.settings
        entry.pinned = settings.pinned
        entry.pinnedAt = settings.pinnedAt
        entry.category = settings.category
        entry.thinkingLevel = settings.thinkingLevel
        entry.verboseLevel = settings.verboseLevel
        entry.fastMode = settings.fastMode.map { $0 == .auto ? .string("auto") : .bool($0 == .on) }
    }
}
