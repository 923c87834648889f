import Foundation
import RelayCore

extension CompanionDownstream {
    typealias Session = CompanionSessions.Session

    /// A client's working directory inside `projects_root` (relative ones are taken inside it).
    func directory(_ raw: String?) throws(CompanionError) -> String {
        guard let raw, !raw.isEmpty else { return projectsRoot }
        guard raw.utf8.count <= 4096, !raw.contains("\0") else { throw Self.outsideRoot(raw) }
        let absolute = raw.hasPrefix("/") ? raw : projectsRoot + "/" + raw
        let resolved = URL(fileURLWithPath: absolute).standardizedFileURL.resolvingSymlinksInPath().path
        guard resolved == projectsRoot || resolved.hasPrefix(projectsRoot + "/") else { throw Self.outsideRoot(raw) }
        return resolved
    }

    static func outsideRoot(_ raw: String) -> CompanionError {
        CompanionError(code: "INVALID_WORKING_DIRECTORY", message: "\(raw.prefix(200)) is not inside the relay's projects root")
    }

    static func validSessionID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 128 && id.utf8.allSatisfy { (0x21...0x7e).contains($0) && $0 != UInt8(ascii: "/") }
    }

    /// The session of `directory` (one per directory): the live one, the stored one, or a new one
    /// named `requestedID` (an id the relay does not know is adopted) or a fresh id.
    func openSession(directory: String, requestedID: String?, completion: @escaping (Result<Session, CompanionError>) -> Void) {
        if let live = sessions.session(directory: directory) { return completion(.success(live)) }
        if let requestedID, let live = sessions.session(requestedID) { return completion(.success(live)) }
        if let requestedID, !Self.validSessionID(requestedID) {
            return completion(.failure(.invalid("sessionId must be 1 to 128 printable characters")))
        }
        guard !sessions.isFull else { return completion(.failure(sessionLimit())) }
        let freshID = requestedID ?? Identifiers.newUUID()
        let draft = ConversationDraft(
            title: (directory as NSString).lastPathComponent,
            backend: settings.backend(forDirectory: directory),
            workingDirectory: directory,
            extraKeys: [ConversationKey(CompanionKeys.session, freshID)]
        )
        hub.conversations.resolve(ConversationKey(CompanionKeys.directory, directory), userID: settings.userID, draft: draft) { [self] result in
            switch result {
            case .failure(let error):
                logger.error("could not open a companion session", metadata: ["error": "\(error)"])
                completion(.failure(CompanionError(code: "STORE_FAILED", message: "the session could not be opened")))
            case .success(let conversation):
                // A directory that had a session keeps its id, as the real server does.
                live(conversation, sessionID: conversation.key(in: CompanionKeys.session) ?? freshID, completion: completion)
            }
        }
    }

    /// The session `sessionID` names: a live one, a stored one (brought back), or any conversation
    /// of the user by its id (`cv_…`, e.g. a Clawline timeline); nil when there is none.
    func findSession(_ sessionID: String, completion: @escaping (Result<Session?, CompanionError>) -> Void) {
        if let live = sessions.session(sessionID) { return completion(.success(live)) }
        guard Self.validSessionID(sessionID) else { return completion(.success(nil)) }
        let user = settings.userID
        hub.conversations.find(ConversationKey(CompanionKeys.session, sessionID), userID: user) { [self] result in
            switch result {
            case .failure:
                completion(.failure(CompanionError(code: "STORE_FAILED", message: "the session could not be read")))
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

    /// Makes a stored conversation a live session (within the limit).
    private func live(_ conversation: Conversation, sessionID: String, completion: @escaping (Result<Session, CompanionError>) -> Void) {
        if let existing = sessions.session(conversationID: conversation.id) { return completion(.success(existing)) }
        let now = clock.nowMillis()
        let session = Session(
            sessionID: sessionID,
            conversationID: conversation.id,
            workingDirectory: conversation.workingDirectory ?? "",
            createdAt: conversation.createdAt,
            lastActivity: now
        )
        guard sessions.add(session) else { return completion(.failure(sessionLimit())) }
        completion(.success(session))
    }

    func sessionLimit() -> CompanionError {
        CompanionError(
            code: "SESSION_LIMIT",
            message: "Maximum number of sessions (\(settings.maxSessions)) reached",
            details: ["maxSessions": .int(Int64(settings.maxSessions))]
        )
    }

    /// The session a command names: by id (adopted for the directory when unknown), else the directory's.
    func commandSession(id: String?, directory: String?, fallback: String?, completion: @escaping (Result<Session, CompanionError>) -> Void) {
        let place: String
        do { place = try self.directory(directory ?? fallback) } catch { return completion(.failure(error)) }
        guard let id, !id.isEmpty else { return openSession(directory: place, requestedID: nil, completion: completion) }
        findSession(id) { [self] found in
            switch found {
            case .success(let session?): completion(.success(session))
            case .success(nil): openSession(directory: place, requestedID: id, completion: completion)
            case .failure(let error): completion(.failure(error))
            }
        }
    }

    /// Marks a session (found by its conversation) backgrounded or not: background sessions idle longer.
    func setBackgrounded(_ conversationID: String, _ backgrounded: Bool) {
        guard let session = sessions.session(conversationID: conversationID) else { return }
        sessions.setBackgrounded(session.sessionID, backgrounded, at: clock.nowMillis())
    }

    /// The socket takes the session's events live from now on.
    func hold(_ session: Session, on connection: CompanionConnection, command: Bool = false) {
        connection.held.insert(session.conversationID)
        sessions.touch(session.sessionID, at: clock.nowMillis(), command: command)
    }
}
