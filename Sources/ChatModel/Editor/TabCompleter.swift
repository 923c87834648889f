/// What Tab completes in the input line: command names after `/`, backend names as the first
/// argument of `/new`, buffer names as the argument of `/buffer`.
public struct TabCompleter: Sendable, Equatable {
    public var backends: [String]
    public var bufferNames: [String]

    public init(backends: [String] = [], bufferNames: [String] = []) {
        self.backends = backends
        self.bufferNames = bufferNames
    }

    /// The span of `lineBeforeCursor` to replace and its candidates (sorted, each ending in a space),
    /// or `nil` when Tab completes nothing there. Matching is a case-insensitive prefix.
    public func complete(_ lineBeforeCursor: [Character]) -> (range: Range<Int>, candidates: [String])? {
        guard lineBeforeCursor.first == "/", !lineBeforeCursor.contains("\n") else { return nil }
        guard let space = lineBeforeCursor.firstIndex(of: " ") else {
            let typed = String(lineBeforeCursor)
            return matches(typed, in: Command.names.map { "/" + $0 }).map { (0..<lineBeforeCursor.count, $0) }
        }
        let command = String(lineBeforeCursor[..<space]).lowercased()
        let argument = String(lineBeforeCursor[(space + 1)...])
        let pool: [String]
        switch command {
        case "/new" where !argument.contains(" "): pool = backends
        case "/buffer": pool = bufferNames
        default: return nil
        }
        return matches(argument, in: pool).map { ((space + 1)..<lineBeforeCursor.count, $0) }
    }

    private func matches(_ typed: String, in pool: [String]) -> [String]? {
        let lowered = typed.lowercased()
        let found = Set(pool.filter { $0.lowercased().hasPrefix(lowered) }).sorted { ($0.lowercased(), $0) < ($1.lowercased(), $1) }
        return found.isEmpty ? nil : found.map { $0 + " " }
    }
}
