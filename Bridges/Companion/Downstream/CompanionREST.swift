import CompanionWire
import Foundation
import RelayCore
import RelayTransport

/// The REST API's pure half: which endpoint a request names, what its body is, and the answers
/// built from values (sessions, summaries). `CompanionDownstream+HTTP` performs the lookups.
enum CompanionREST {
    enum Route: Equatable {
        /// `GET /health`, without auth.
        case health
        /// A plain request to the WebSocket endpoint.
        case upgradeRequired
        case notFound
        /// Under `/api/`, behind the token.
        case api(API)
    }

    enum API: Equatable {
        case health
        case projects
        case startProject(name: String)
        case sessions
        case continueSession
        case describeSession(id: String)
        case closeSession(id: String, stream: Bool)
        case ask
        case startStream
        case sendToStream(sessionID: String)
        /// `POST /api/permission/:sessionId {response}`.
        case answerPermission(sessionID: String)
        /// `POST /api/files/content {path, workingDirectory}` (the HTTP app's file viewer).
        case fileContent
        /// The HTTP app's chat: `POST /api/chat`, `POST /api/chat/kill`, `GET /api/messages/:id`.
        case chat
        case killChat
        case storedMessage(id: String)
        case notFound
    }

    static func route(method: String, path: String, isWebSocketPath: Bool) -> Route {
        if method == "GET", path == "/health" { return .health }
        if isWebSocketPath { return .upgradeRequired }
        guard path.hasPrefix("/api/") else { return .notFound }
        let parts = path.dropFirst(5).split(separator: "/", omittingEmptySubsequences: false).map { String($0).removingPercentEncoding ?? String($0) }
        switch (method, parts.count, parts.first) {
        case ("GET", 1, "health"): return .api(.health)
        case ("GET", 1, "projects"): return .api(.projects)
        case ("POST", 3, "projects") where parts[2] == "start": return .api(.startProject(name: parts[1]))
        case ("GET", 1, "sessions"): return .api(.sessions)
        case ("POST", 2, "sessions") where parts[1] == "continue": return .api(.continueSession)
        case ("GET", 2, "sessions"): return .api(.describeSession(id: parts[1]))
        case ("DELETE", 2, "sessions"), ("DELETE", 2, "stream"): return .api(.closeSession(id: parts[1], stream: parts[0] == "stream"))
        case ("POST", 1, "ask"): return .api(.ask)
        case ("POST", 2, "stream") where parts[1] == "start": return .api(.startStream)
        case ("POST", 2, "stream"): return .api(.sendToStream(sessionID: parts[1]))
        case ("POST", 2, "permission"): return .api(.answerPermission(sessionID: parts[1]))
        case ("POST", 2, "files") where parts[1] == "content": return .api(.fileContent)
        case ("POST", 1, "chat"): return .api(.chat)
        case ("POST", 2, "chat") where parts[1] == "kill": return .api(.killChat)
        case ("GET", 2, "messages"): return .api(.storedMessage(id: parts[1]))
        default: return .api(.notFound)
        }
    }

    /// Whether the request's body is read before it is routed (only POST and PUT with a body).
    static func hasBody(method: String, contentLength: Int?) -> Bool { (method == "POST" || method == "PUT") && (contentLength ?? 0) > 0 }

    /// A request body as a JSON object (`{}` when blank).
    static func body(_ received: Result<ReceivedBody, BodyError>, limit: Int) -> Result<CompanionFields, CompanionHTTPError> {
        switch received {
        case .failure(.tooLarge): return .failure(.bodyTooLarge(limit: limit))
        case .failure: return .failure(.unreadableBody)
        case .success(.file): return .failure(.internalError)
        case .success(.bytes(let bytes)):
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0a || $0 == 0x0d || $0 == 0x09 }) { return .success(CompanionFields()) }
            guard case .object(let object)? = JSONValue.parse(bytes) else { return .failure(.invalidJSON) }
            return .success(CompanionFields(object))
        }
    }

    // MARK: Answers

    static func json(_ status: Int, _ body: some Encodable) -> HTTPResponse { .json(status, CompanionJSON.encode(body)) }

    static func answer(_ error: CompanionHTTPError) -> HTTPResponse { json(error.status, error.body) }

    /// A session could not be opened or found, or a turn could not start, for a REST call.
    static func answer(_ error: CompanionError) -> HTTPResponse { json(error.code.httpStatus, ErrorBody.refusal(error)) }

    static func projectStartRefusal(_ name: String, status: Int, error: String, message: String) -> HTTPResponse {
        json(status, ProjectStartAnswer.refused(project: name, error: error, message: message))
    }

    /// `POST /api/projects/:name/start` when the project's folder is not one.
    static func projectStartRefusal(_ name: String, _ refusal: CompanionProjects.Refusal) -> HTTPResponse {
        switch refusal {
        case .invalidName: projectStartRefusal(name, status: 403, error: "Access denied", message: "Invalid project path")
        case .notFound: projectStartRefusal(name, status: 404, error: "Project not found", message: "Project '\(name.prefix(200))' does not exist")
        }
    }

    /// `POST /api/projects/:name/start` when its session could not be opened.
    static func projectStartRefusal(_ name: String, _ error: CompanionError) -> HTTPResponse {
        if error.code == .sessionLimit { return projectStartRefusal(name, status: 429, error: "Too many sessions", message: error.message) }
        return projectStartRefusal(name, status: error.code.httpStatus, error: error.code.rawValue, message: error.message)
    }

    static func projectStarted(_ name: String, place: String, session: CompanionSessions.Session, requestedID: String?) -> HTTPResponse {
        let started = ProjectStartAnswer.Session(
            sessionId: session.sessionID,
            projectName: name,
            projectPath: place,
            status: "running",
            startedAt: CompanionTimestamp.string(session.createdAt)
        )
        return json(200, ProjectStartAnswer.started(started, continued: requestedID != nil && requestedID == session.sessionID))
    }

    /// `GET /api/sessions`: every stored conversation of the user, live or not.
    static func sessionList(_ summaries: [ConversationSummary], live: (String) -> CompanionSessions.Session?) -> HTTPResponse {
        let details = summaries.map { summary in
            let conversation = summary.conversation
            let session = live(conversation.id)
            return SessionList.Detail(
                sessionId: session?.sessionID ?? conversation.key(in: CompanionKeys.session) ?? conversation.id,
                workingDirectory: conversation.workingDirectory ?? "",
                live: session != nil,
                backgrounded: session?.backgrounded ?? false,
                createdAt: conversation.createdAt,
                lastActivity: max(session?.lastActivity ?? 0, conversation.updatedAt),
                messageCount: summary.messageCount
            )
        }
        return json(200, SessionList(details: details))
    }

    static func sessionDescription(_ sessionID: String, directory: String, status: String, createdAt: Int64) -> HTTPResponse {
        json(200, SessionDescription(sessionId: sessionID, projectPath: directory, status: status, startedAt: CompanionTimestamp.string(createdAt)))
    }

    static func sessionContinued(_ session: CompanionSessions.Session) -> HTTPResponse {
        let body = SessionContinued(
            sessionId: session.sessionID,
            conversationStarted: session.conversationStarted,
            workingDirectory: session.workingDirectory,
            initialPrompt: session.initialPrompt,
            createdAt: session.createdAt,
            lastActivity: session.lastActivity
        )
        return json(200, body)
    }
}
