import Foundation
import LocalBridge

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension ConfigDecoder {
    /// A `kind = "claude-code"` entry's keys besides `name` and `kind`.
    static let claudeCodeKeys = [
        "command", "timeout_seconds", "max_seconds", "env", "working_directory", "extra_args", "permission_mode", "allowed_tools",
        "disallowed_tools", "approval_timeout_seconds", "max_processes", "idle_seconds",
    ]

    static func claudeCode(_ entry: ConfigTable, runningAsRoot: Bool = geteuid() == 0) throws(ConfigError) -> ClaudeCodeSettings {
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
        settings.permissionMode = try permissionMode(entry, runningAsRoot: runningAsRoot) ?? settings.permissionMode
        settings.allowedTools = try toolRules(entry, "allowed_tools")
        settings.disallowedTools = try toolRules(entry, "disallowed_tools")
        settings.approvalTimeoutSeconds =
            try bounded(entry, "approval_timeout_seconds", ClaudeCodeSettings.approvalTimeoutRange) ?? settings.approvalTimeoutSeconds
        settings.maxProcesses = try bounded(entry, "max_processes", ClaudeCodeSettings.maxProcessesRange) ?? settings.maxProcesses
        settings.idleSeconds = try bounded(entry, "idle_seconds", ClaudeCodeSettings.idleSecondsRange) ?? settings.idleSeconds
        return settings
    }

    private static func permissionMode(_ entry: ConfigTable, runningAsRoot: Bool) throws(ConfigError) -> ClaudeCodeSettings.PermissionMode? {
        guard let text = try entry.string("permission_mode") else { return nil }
        guard let mode = ClaudeCodeSettings.PermissionMode(rawValue: text) else {
            let names = ClaudeCodeSettings.PermissionMode.allCases.map { quoted($0.rawValue) }.joined(separator: ", ")
            throw entry.error(.invalidValue, key: "permission_mode", "expected one of \(names), got \(quoted(text))")
        }
        if mode == .bypassPermissions, runningAsRoot {
            throw entry.error(
                .invalidValue,
                key: "permission_mode",
                #""bypassPermissions" cannot be used while the relay runs as root: Claude Code itself refuses it ("--dangerously-skip-permissions cannot be used with root/sudo privileges"); run the relay as another user, or use "ask""#
            )
        }
        return mode
    }

    /// Tool rules as Claude Code writes them (`Bash(git status)`, `Edit`): non-empty, one line each.
    private static func toolRules(_ entry: ConfigTable, _ key: String) throws(ConfigError) -> [String] {
        let rules = try entry.strings(key) ?? []
        if let bad = rules.first(where: { $0.trimmingCharacters(in: .whitespaces).isEmpty || $0.contains(where: \.isNewline) || $0.hasPrefix("-") }) {
            throw entry.error(.invalidValue, key: key, #"expected tool rules like "Read" or "Bash(git status)", got \#(quoted(bad))"#)
        }
        return rules
    }

    private static func bounded(_ entry: ConfigTable, _ key: String, _ range: ClosedRange<Int>) throws(ConfigError) -> Int? {
        guard let value = try entry.integer(key) else { return nil }
        guard range.contains(value) else {
            throw entry.error(.invalidValue, key: key, "expected \(range.lowerBound) to \(range.upperBound), got \(value)")
        }
        return value
    }
}
