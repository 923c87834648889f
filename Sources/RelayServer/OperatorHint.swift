import Foundation

/// How an operator runs this very binary against this relay's data, for hints the log prints
/// (`clawrelay devices approve …`): pasted into a shell, it must work as printed.
enum OperatorHint {
    /// `clawrelay` when that name on PATH is this binary, else the binary's absolute path; then the
    /// data directory (absolute) unless it is the default one of the working directory.
    static func prefix(dataDirectory: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        var words = [program(environment: environment)]
        let data = absolute(dataDirectory)
        if data != absolute(RelayConfig.defaultDataDirectory) { words += ["--data-dir", data] }
        return words.map(quoted).joined(separator: " ")
    }

    /// The command that runs `subcommand` (e.g. "devices approve ID"): the program, the subcommand,
    /// then the options.
    static func command(_ subcommand: String, prefix: String) -> String {
        guard let space = prefix.firstIndex(of: " ") else { return "\(prefix) \(subcommand)" }
        return "\(prefix[..<space]) \(subcommand)\(prefix[space...])"
    }

    private static func program(environment: [String: String]) -> String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let name = (me as NSString).lastPathComponent
        for folder in (environment["PATH"] ?? "").split(separator: ":") {
            let candidate = (String(folder) as NSString).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate), realPath(candidate) == realPath(me) { return name }
        }
        return me
    }

    private static func absolute(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(path)
        return (full as NSString).standardizingPath
    }

    private static func realPath(_ path: String) -> String { (path as NSString).resolvingSymlinksInPath }

    /// Single quotes around a word a shell would split or expand.
    private static func quoted(_ word: String) -> String {
        let plain = word.allSatisfy { $0.isLetter || $0.isNumber || "/._-+=:@,".contains($0) }
        return plain && !word.isEmpty ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
