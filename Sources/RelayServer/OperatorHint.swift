import Foundation

/// How an operator runs this very binary against this relay's data, for hints the log prints
/// (`clawrelay devices approve …`): pasted into a shell, it must work as printed.
struct OperatorHint: Sendable {
    /// The binary, shell-quoted: `clawrelay` when that name on PATH is this binary, else its
    /// absolute path.
    let program: String
    /// `--data-dir DIR`, absolute and quoted: the hint is pasted into a shell that may be in
    /// another directory, where the default `./.clawrelay` would name other data.
    let options: String

    init(dataDirectory: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        program = Self.quoted(Self.program(environment: environment))
        options = " --data-dir " + Self.quoted(Self.absolute(dataDirectory))
    }

    /// The program and its options, as a person would start any subcommand.
    var prefix: String { program + options }

    /// The command that runs `subcommand` (e.g. "devices approve ID"): the program, the subcommand,
    /// then the options.
    func command(_ subcommand: String) -> String { "\(program) \(subcommand)\(options)" }

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
