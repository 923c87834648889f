import CompanionWire
import Foundation
import Logging
import RelayCore

/// The live Companion sessions over the core's conversations: a session id or a working
/// directory leads to a conversation (found, brought back, adopted or created), which becomes a
/// live session within the limit. Shared by every socket and REST call of the listener.
///
/// - Important: loop thread only.
final class CompanionSessionRegistry {
    typealias Session = CompanionSessions.Session

    private let hub: RelayHub
    private var settings: CompanionSettings
    private let projects: CompanionProjects
    private let clock: any Clock
    private let logger: Logger
    private(set) var table: CompanionSessions

    init(hub: RelayHub, settings: CompanionSettings, projects: CompanionProjects, clock: any Clock, logger: Logger) {
        self.hub = hub
        self.settings = settings
        self.projects = projects
        self.clock = clock
        self.logger = logger
        table = CompanionSessions(
            maxSessions: settings.maxSessions,
            idleMillis: Int64(settings.idleSeconds) * 1000,
            backgroundIdleMillis: Int64(settings.backgroundIdleSeconds) * 1000
        )
    }

    /// New sessions take `settings` (routes, backend); the limits apply from the next check.
    func reconfigure(_ settings: CompanionSettings) {
        self.settings = settings
        table.maxSessions = settings.maxSessions
        table.idleMillis = Int64(settings.idleSeconds) * 1000
        table.backgroundIdleMillis = Int64(settings.backgroundIdleSeconds) * 1000
    }

    func session(_ sessionID: String) -> Session? { table.session(sessionID) }

    /// A conversation was reset (`/new`, a gateway `sessions.reset`): its session goes on, same id, with the fresh one.
    func follow(_ reset: ConversationReset) { table.follow(reset: reset.old.id, to: reset.fresh.id) }

    /// The session id a conversation has for Companion clients (its conversation id when it has none).
    func sessionID(of conversationID: String) -> String {
        hub.conversations.key(of: conversationID, scheme: CompanionKeys.session) ?? conversationID
    }

    /// The conversation a session id names, as far as it is known without a read.
    func conversationID(ofSession sessionID: String) -> String {
        if let session = table.session(sessionID) { return session.conversationID }
        return hub.conversations.cached(ConversationKey(CompanionKeys.session, sessionID), userID: settings.userID)?.id ?? sessionID
    }

    static func isValidSessionID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 128 && id.utf8.allSatisfy { (0x21...0x7e).contains($0) && $0 != UInt8(ascii: "/") }
    }

    /// The session of `directory` (one per directory): the live one, the stored one, or a new one
    /// named `requestedID` (an id the relay does not know is adopted) or a fresh id.
    func open(directory: String, requestedID: String?, completion: @escaping (Result<Session, CompanionError>) -> Void) {
        if let live = table.session(directory: directory) { return completion(.success(live)) }
        if let requestedID, let live = table.session(requestedID) { return completion(.success(live)) }
        // A directory that had a session keeps its id, as the real server does.
        create(in: directory, requestedID: requestedID, key: ConversationKey(CompanionKeys.directory, directory), completion: completion)
    }

    /// The session `sessionID` names: a live one, a stored one (brought back), or any conversation
    /// of the user by its id (`cv_…`, e.g. a Clawline timeline); nil when there is none.
    func find(_ sessionID: String, completion: @escaping (Result<Session?, CompanionError>) -> Void) {
        if let live = table.session(sessionID) { return completion(.success(live)) }
        guard Self.isValidSessionID(sessionID) else { return completion(.success(nil)) }
        let user = settings.userID
        hub.conversations.find(ConversationKey(CompanionKeys.session, sessionID), userID: user) { [self] result in
            switch result {
            case .failure:
                completion(.failure(.sessionNotRead))
            case .success(let conversation?):
                live(conversation, sessionID: sessionID) { completion($0.map { Optional($0) }) }
            case .success(nil):
                guard sessionID.hasPrefix("cv_") else { return completion(.success(nil)) }
                hub.conversations.load(id: sessionID) { [self] loaded in
                    guard case .success(let conversation?) = loaded, conversation.userID == user else { return completion(.success(nil)) }
                    // Named in the Companion scheme from now on, so this device's queue follows it.
                    hub.conversations.addKey(ConversationKey(CompanionKeys.session, sessionID), to: conversation) { _ in }
                    live(conversation, sessionID: sessionID) { completion($0.map { Optional($0) }) }
                }
            }
        }
    }

    /// A new conversation in `directory` (the HTTP app's first message, or one after Stop): named
    /// by `requestedID` when the app sent an id the relay does not know (adopted, never refused).
    func openNew(directory: String, requestedID: String?, completion: @escaping (Result<Session, CompanionError>) -> Void) {
        create(in: directory, requestedID: requestedID, key: nil, completion: completion)
    }

    /// The conversation `key` names in `directory` (made now if it is new; nil: always a new one,
    /// named by its session id), as a live session.
    private func create(
        in directory: String,
        requestedID: String?,
        key: ConversationKey?,
        completion: @escaping (Result<Session, CompanionError>) -> Void
    ) {
        if let requestedID, !Self.isValidSessionID(requestedID) {
            return completion(.failure(.invalid("sessionId must be 1 to 128 printable characters")))
        }
        guard !table.isFull else { return completion(.failure(.sessionLimit(settings.maxSessions))) }
        let freshID = requestedID ?? Identifiers.newUUID()
        let named = ConversationKey(CompanionKeys.session, freshID)
        let draft = ConversationDraft(
            title: (directory as NSString).lastPathComponent,
            backend: settings.backend(forDirectory: directory),
            workingDirectory: directory,
            extraKeys: key == nil ? [] : [named]
        )
        hub.conversations.resolve(key ?? named, userID: settings.userID, draft: draft) { [self] result in
            switch result {
            case .failure(let error):
                logger.error("could not open a companion session", metadata: ["error": "\(error)"])
                completion(.failure(.sessionNotOpened))
            case .success(let conversation):
                live(conversation, sessionID: conversation.key(in: CompanionKeys.session) ?? freshID, completion: completion)
            }
        }
    }

    /// The session a command names: by id (adopted for the directory when unknown), else the
    /// directory's (`fallback` when it names none).
    func forCommand(id: String?, directory: String?, fallback: String?, completion: @escaping (Result<Session, CompanionError>) -> Void) {
        let place: String
        do { place = try projects.directory(directory ?? fallback) } catch { return completion(.failure(error)) }
        guard let id, !id.isEmpty else { return open(directory: place, requestedID: nil, completion: completion) }
        find(id) { [self] found in
            switch found {
            case .success(let session?): completion(.success(session))
            case .success(nil): open(directory: place, requestedID: id, completion: completion)
            case .failure(let error): completion(.failure(error))
            }
        }
    }

    /// Makes a stored conversation a live session (within the limit).
    private func live(_ conversation: Conversation, sessionID: String, completion: @escaping (Result<Session, CompanionError>) -> Void) {
        if let existing = table.session(conversationID: conversation.id) { return completion(.success(existing)) }
        let session = Session(
            sessionID: sessionID,
            conversationID: conversation.id,
            workingDirectory: conversation.workingDirectory ?? "",
            createdAt: conversation.createdAt,
            lastActivity: clock.nowMillis()
        )
        guard table.add(session) else { return completion(.failure(.sessionLimit(settings.maxSessions))) }
        completion(.success(session))
    }

    // MARK: Bookkeeping

    /// A socket or a request used the session (`command`: a turn was sent in it).
    func touch(_ session: Session, command: Bool) { table.touch(session.sessionID, at: clock.nowMillis(), command: command) }

    func setBackgrounded(sessionID: String, _ backgrounded: Bool) { table.setBackgrounded(sessionID, backgrounded, at: clock.nowMillis()) }

    /// Marks the session of a conversation backgrounded or not: background sessions idle longer.
    func setBackgrounded(conversationID: String, _ backgrounded: Bool) {
        guard let session = table.session(conversationID: conversationID) else { return }
        table.setBackgrounded(session.sessionID, backgrounded, at: clock.nowMillis())
    }

    func setInitialPrompt(_ session: Session, _ prompt: String) { table.setInitialPrompt(session.sessionID, prompt) }

    func remove(_ sessionID: String) -> Session? { table.remove(sessionID) }

    /// Closes the sessions idle past their limit whose conversation has no turn running or waiting.
    func expire() -> [Session] { table.expire(now: clock.nowMillis(), isBusy: hub.turns.isBusy) }
}
