// The REST API's JSON bodies (`/health` and `/api/...`), in the forms the app and the guide decode.

/// `GET /health`, without auth.
public struct HealthBody: Encodable, Sendable, Equatable {
    public var status = "healthy"
    public var version = Welcome.serverVersion
    public var timestamp: String
    public var sessions: Int

    public init(timestamp: String, sessions: Int) {
        self.timestamp = timestamp
        self.sessions = sessions
    }
}

/// `GET /api/health`.
public struct APIHealthBody: Encodable, Sendable, Equatable {
    public var status = "healthy"
    public var sessionCount: Int
    public var activeSessions: [String]
    public var timestamp: String

    public init(activeSessions: [String], timestamp: String) {
        self.sessionCount = activeSessions.count
        self.activeSessions = activeSessions
        self.timestamp = timestamp
    }
}

/// `GET /api/projects`: every field required by the app.
public struct ProjectList: Encodable, Sendable, Equatable {
    public struct Project: Encodable, Sendable, Equatable {
        public var name: String
        public var path: String
        public var type = "folder"

        public init(name: String, path: String) {
            self.name = name
            self.path = path
        }
    }

    public var basePath: String
    public var projects: [Project]

    public init(basePath: String, projects: [Project]) {
        self.basePath = basePath
        self.projects = projects
    }
}

/// `POST /api/projects/:name/start`: the app decodes `success`, a whole `session` and `message`
/// whatever the status, so a refusal carries an empty session too.
public struct ProjectStartAnswer: Encodable, Sendable, Equatable {
    public struct Session: Encodable, Sendable, Equatable {
        public var sessionId: String
        public var projectName: String
        public var projectPath: String
        public var status: String
        /// ISO 8601 (empty on a refusal).
        public var startedAt: String

        public init(sessionId: String, projectName: String, projectPath: String, status: String, startedAt: String) {
            self.sessionId = sessionId
            self.projectName = projectName
            self.projectPath = projectPath
            self.status = status
            self.startedAt = startedAt
        }
    }

    public var success: Bool
    public var continued: Bool?
    public var message: String
    public var session: Session
    public var error: String?
    public var code: String?

    public static func started(_ session: Session, continued: Bool) -> ProjectStartAnswer {
        let verb = continued ? "Continuing session for project" : "Session started for project"
        return ProjectStartAnswer(success: true, continued: continued, message: "\(verb) '\(session.projectName)'", session: session)
    }

    public static func refused(project: String, error: String, message: String) -> ProjectStartAnswer {
        let empty = Session(sessionId: "", projectName: project, projectPath: "", status: "error", startedAt: "")
        return ProjectStartAnswer(success: false, message: message, session: empty, error: error, code: error)
    }
}

/// `GET /api/sessions`: the ids, and what the relay knows of each.
public struct SessionList: Encodable, Sendable, Equatable {
    public struct Detail: Encodable, Sendable, Equatable {
        public var sessionId: String
        public var workingDirectory: String
        public var live: Bool
        public var backgrounded: Bool
        public var createdAt: Int64
        public var lastActivity: Int64
        public var messageCount: Int

        public init(
            sessionId: String,
            workingDirectory: String,
            live: Bool,
            backgrounded: Bool,
            createdAt: Int64,
            lastActivity: Int64,
            messageCount: Int
        ) {
            self.sessionId = sessionId
            self.workingDirectory = workingDirectory
            self.live = live
            self.backgrounded = backgrounded
            self.createdAt = createdAt
            self.lastActivity = lastActivity
            self.messageCount = messageCount
        }
    }

    public var sessions: [String]
    public var details: [Detail]

    public init(details: [Detail]) {
        self.sessions = details.map(\.sessionId)
        self.details = details
    }
}

/// `GET /api/sessions/:id`.
public struct SessionDescription: Encodable, Sendable, Equatable {
    public var sessionId: String
    public var projectPath: String
    public var status: String
    public var startedAt: String
    @AlwaysPresent public var stoppedAt: String?
    @AlwaysPresent public var error: String?

    public init(sessionId: String, projectPath: String, status: String, startedAt: String) {
        self.sessionId = sessionId
        self.projectPath = projectPath
        self.status = status
        self.startedAt = startedAt
        self.stoppedAt = nil
        self.error = nil
    }
}

/// `DELETE /api/sessions/:id` and `/api/stream/:id`.
public struct SessionClosed: Encodable, Sendable, Equatable {
    public var success: Bool
    public var sessionId: String?
    public var message: String

    public init(success: Bool, sessionId: String?, message: String) {
        self.success = success
        self.sessionId = sessionId
        self.message = message
    }
}

/// `POST /api/sessions/continue`.
public struct SessionContinued: Encodable, Sendable, Equatable {
    public var success = true
    public var sessionId: String
    public var conversationStarted: Bool
    public var workingDirectory: String
    @AlwaysPresent public var initialPrompt: String?
    public var createdAt: Int64
    public var lastActivity: Int64

    public init(sessionId: String, conversationStarted: Bool, workingDirectory: String, initialPrompt: String?, createdAt: Int64, lastActivity: Int64)
    {
        self.sessionId = sessionId
        self.conversationStarted = conversationStarted
        self.workingDirectory = workingDirectory
        self.initialPrompt = initialPrompt
        self.createdAt = createdAt
        self.lastActivity = lastActivity
    }
}

/// `sessions/continue` naming a session of another directory.
public struct WorkingDirectoryMismatch: Encodable, Sendable, Equatable {
    public var error = "Working directory mismatch"
    public var expected: String
    public var provided: String

    public init(expected: String, provided: String) {
        self.expected = expected
        self.provided = provided
    }
}

/// `POST /api/stream/start`.
public struct StreamReady: Encodable, Sendable, Equatable {
    public var sessionId: String
    public var success = true
    public var message = "Session ready for commands"

    public init(sessionId: String) { self.sessionId = sessionId }
}

/// `POST /api/stream/:id`: the answer once the turn ended.
public struct StreamAnswer: Encodable, Sendable, Equatable {
    public var sessionId: String
    public var success = true
    public var response: CLIResult

    public init(sessionId: String, response: CLIResult) {
        self.sessionId = sessionId
        self.response = response
    }
}
