import GatewayWire
import RelayCore

/// `commands.list`: the slash commands a message typed here may start with, in OpenClaw's command
/// shape: the relay's own (the core's `RelayCommand.catalog`, and `/stop`, which `chat.send` runs),
/// then those of the backend that answers the session (`sessionKey`, else the gateway's backend),
/// as it last listed them (Claude Code's `/compact`, `/cost`, …; typed, they reach it).
extension GatewayDownstream {
    static let commandScopes: Set<String> = ["text", "native", "both"]

    /// `/stop`, which `chat.send` answers itself (it aborts the session's runs).
    func listCommands(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        if let scope = request.fields["scope"], !(scope.stringValue.map(Self.commandScopes.contains) ?? false) {
            return socket.fail(request.id, .invalidCommandScope)
        }
        let params = request.params(as: CommandsListParams.self)
        let answer = { [self] (backend: String) in
            // Every command here is typed in a message: a client asking for native ones gets none.
            let entries = params?.scope == "native" ? [] : commandEntries(backend: backend, includeArgs: params?.includeArgs == true)
            socket.reply(request.id, CommandsList(commands: Array(entries.prefix(CommandsList.maxCommands))))
        }
        let fallback = settings.backend ?? hub.router.defaultBackend
        guard let key = params?.sessionKey, !key.isEmpty else { return answer(fallback) }
        conversation(named: key, creating: false) { [self] result in
            if case .success(let conversation) = result { return answer(backendName(for: conversation)) }
            answer(Self.backendName(in: key).flatMap { hub.router.backends[$0] == nil ? nil : $0 } ?? fallback)
        }
    }

    /// The relay's commands, then the backend's that the relay does not take itself.
    func commandEntries(backend: String, includeArgs: Bool) -> [CommandEntry] {
        var entries = RelayCommand.catalog.map { info in
            CommandEntry(
                name: info.name,
                description: info.summary,
                category: info.category.rawValue,
                source: "native",
                acceptsArgs: info.argument != nil,
                args: includeArgs ? info.argument.map { [CommandEntry.Arg(name: $0.name, description: $0.summary, required: $0.required)] } : nil
            )
        }
        let taken = Set(entries.map(\.name))
        for name in hub.router.backends[backend]?.slashCommands ?? [] where !taken.contains(name) {
            entries.append(CommandEntry(name: name, description: "\(backend)'s /\(name)", category: nil, source: "plugin", acceptsArgs: true))
        }
        return entries
    }
}
