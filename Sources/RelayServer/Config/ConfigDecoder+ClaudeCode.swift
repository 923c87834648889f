import Foundation

extension ConfigDecoder {
    /// A `kind = "claude-code"` entry's keys besides `name` and `kind`.
    static let claudeCodeKeys = ["command", "timeout_seconds", "max_seconds", "env", "working_directory", "extra_args"]

    static func claudeCode(_ entry: ConfigTable) throws(ConfigError) -> ClaudeCodeSettings {
        var settings = ClaudeCodeSettings()
        if entry.contains("command") {
            // One program as a string, or the program and its first arguments as an array.
            var command: [String] = []
            if let program = entry.table["command"]?.string { command = [program] } else { command = try entry.strings("command") ?? [] }
            guard let program = command.first, !program.isEmpty else {
                throw entry.error(.invalidValue, key: "command", #"needs the program to run, e.g. "claude" or ["/usr/local/bin/claude"]"#)
            }
            settings.command = command
        }
        settings.timeoutSeconds = try entry.integer("timeout_seconds") ?? settings.timeoutSeconds
        settings.maxSeconds = try entry.integer("max_seconds")
        settings.environment = try entry.stringTable("env") ?? [:]
        settings.extraArguments = try entry.strings("extra_args") ?? []
        if let directory = try entry.string("working_directory") {
            guard directory.hasPrefix("/") else {
                throw entry.error(.invalidValue, key: "working_directory", "must be an absolute path, got \(quoted(directory))")
            }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw entry.error(.invalidValue, key: "working_directory", "\(quoted(directory)) is not a directory")
            }
            settings.workingDirectory = directory
        }
        return settings
    }
}
