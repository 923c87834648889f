/// A command the relay answers itself, as a client's command palette lists it.
public struct RelayCommandInfo: Sendable, Equatable {
    /// What it is about, in OpenClaw's command categories.
    public enum Category: String, Sendable {
        case session, options, status, management, tools
    }

    /// Its one argument, when it takes one.
    public struct Argument: Sendable, Equatable {
        public var name: String
        public var summary: String
        public var required: Bool
    }

    /// Without the slash: `backend` is typed `/backend`.
    public var name: String
    public var summary: String
    public var category: Category
    public var argument: Argument?

    public init(name: String, summary: String, category: Category, argument: Argument? = nil) {
        self.name = name
        self.summary = summary
        self.category = category
        self.argument = argument
    }
}

extension RelayCommand {
    /// Every command `RelayCommand` recognizes, in the order palettes list them.
    public static let catalog: [RelayCommandInfo] = [
        RelayCommandInfo(
            name: "backend",
            summary: "Show which backend answers this conversation, or switch it to another",
            category: .session,
            argument: .init(name: "name", summary: "The backend to switch to", required: false)
        ),
        RelayCommandInfo(name: "approve", summary: "Allow a waiting tool request once", category: .tools, argument: approvalID),
        RelayCommandInfo(name: "always", summary: "Allow a waiting tool request for the rest of the session", category: .tools, argument: approvalID),
        RelayCommandInfo(name: "deny", summary: "Refuse a waiting tool request", category: .tools, argument: approvalID),
        RelayCommandInfo(name: "new", summary: "Start a fresh session (the old one is archived)", category: .session),
        RelayCommandInfo(name: "reset", summary: "Start a fresh session (the old one is archived)", category: .session),
        RelayCommandInfo(name: "clear", summary: "Start a fresh session (the old one is archived)", category: .session),
        RelayCommandInfo(
            name: "model",
            summary: "Show the backend answering this conversation, or switch it",
            category: .options,
            argument: .init(name: "model", summary: "A backend name (or <kind>/<name>)", required: false)
        ),
        RelayCommandInfo(
            name: "think",
            summary: "Show or set the thinking level",
            category: .options,
            argument: .init(name: "level", summary: ThinkingLevel.all.joined(separator: ", ") + " or default", required: false)
        ),
        RelayCommandInfo(name: "compact", summary: "Compact the session's context, when the backend can", category: .session),
        RelayCommandInfo(name: "stop", summary: "Stop the session's running and waiting answers", category: .session),
    ]

    private static let approvalID = RelayCommandInfo.Argument(
        name: "id",
        summary: "The request's id or its first characters (needed when several wait)",
        required: false
    )
}
