/// A conversation starting afresh (`/new`, `/reset`, `/clear`, the gateway's `sessions.reset`), as
/// OpenClaw's gateway does it: the session gets a new id and an empty transcript, and the old one
/// is archived, not deleted.
extension Turns {
    /// Stops the conversation's turns, then gives its keys a fresh conversation (same title,
    /// backend, working directory and settings; no backend session, so Claude Code starts without
    /// `--resume`) and archives the old one, which keeps its history and stays reachable by id.
    /// The backend that answered it lets go of what it held (`Backend.reset`). `completion` gets
    /// both, nil when there is no such conversation.
    public func reset(
        conversationID: String,
        reason: ResetReason,
        policy: TurnPolicy,
        completion: @escaping (Result<ConversationReset?, any Error>) -> Void
    ) {
        beginReset(conversationID)
        abort(conversationID: conversationID, reason: "the session was reset")
        conversations.reset(id: conversationID, reason: reason) { [self] result in
            if case .success(let reset?) = result {
                router.backend(named: router.backendName(for: reset.old, policy: policy))?.reset(conversationID: reset.old.id, reason: reason)
            }
            // What was sent meanwhile goes where the keys point now (the old conversation if it failed).
            endReset(conversationID, fresh: (try? result.get())??.fresh.id)
            completion(result)
        }
    }

    /// A message that waits for a reset.
    struct HeldMessage {
        var message: UserMessage
        var policy: TurnPolicy
        var completion: (SubmitOutcome) -> Void
    }

    /// The most messages one reset holds (a reset takes a store round trip).
    static let maxHeldPerReset = 64

    func beginReset(_ conversationID: String) {
        if resetting[conversationID] == nil { resetting[conversationID] = [] }
    }

    func hold(_ message: UserMessage, policy: TurnPolicy, completion: @escaping (SubmitOutcome) -> Void) {
        guard resetting[message.conversationID, default: []].count < Self.maxHeldPerReset else { return completion(.queueFull) }
        resetting[message.conversationID, default: []].append(HeldMessage(message: message, policy: policy, completion: completion))
    }

    private func endReset(_ conversationID: String, fresh: String?) {
        for held in resetting.removeValue(forKey: conversationID) ?? [] {
            var message = held.message
            if let fresh { message.conversationID = fresh }
            submit(message, policy: held.policy, completion: held.completion)
        }
    }
}

/// A conversation reset: the archived one and the one its keys name now.
public struct ConversationReset: Sendable, Equatable {
    public var old: Conversation
    public var fresh: Conversation

    public init(old: Conversation, fresh: Conversation) {
        self.old = old
        self.fresh = fresh
    }

    /// The fresh conversation for `old`, made at `now` with the id `id`: its title, backend,
    /// working directory, settings (unread marks aside) and keys; no backend session. Every
    /// journal resets through this.
    public static func fresh(from old: Conversation, id: String, at now: Int64) -> Conversation {
        var fresh = Conversation(
            id: id,
            userID: old.userID,
            title: old.title,
            backend: old.backend,
            workingDirectory: old.workingDirectory,
            createdAt: now,
            updatedAt: now,
            keys: old.keys
        )
        fresh.settings = old.settings
        fresh.settings.markedUnread = false
        return fresh
    }

    /// `old` once reset: archived at `now`, with no key (its id still names it).
    public static func archived(_ old: Conversation, at now: Int64) -> Conversation {
        var archived = old
        ConversationEdit.archive(true).apply(to: &archived, at: now)
        archived.keys = []
        archived.backendSession = nil
        return archived
    }
}
