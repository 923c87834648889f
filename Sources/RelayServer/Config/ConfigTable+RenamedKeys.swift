import TOMLKit

/// A key's old name, still read (with a warning) since the file got one word per concept.
struct RenamedKey {
    /// `backends` for every `[[backends]]` entry.
    var section: String
    var old: String
    var new: String

    static let all = [
        // `env`, like the command kind, and the shorter of the two.
        RenamedKey(section: "backends", old: "environment", new: "env"),
        // What a device may have waiting behind a conversation's running turn, in every protocol.
        RenamedKey(section: "clawline", old: "max_queued_messages", new: "max_queued_turns"),
        RenamedKey(section: "companion", old: "max_queued_commands", new: "max_queued_turns"),
        // How long a running turn may go without output.
        RenamedKey(section: "discoclaw", old: "turn_inactivity_seconds", new: "stream_inactivity_seconds"),
        // The largest WebSocket message a listener takes.
        RenamedKey(section: "gateway", old: "max_payload_bytes", new: "max_frame_bytes"),
    ]
}

/// Collects what the file should write differently while it is decoded.
final class ConfigWarnings {
    private(set) var items: [ConfigWarning] = []

    func add(_ warning: ConfigWarning) { items.append(warning) }
}

extension ConfigTable {
    /// This table with its keys' old names read as the new ones: each old name is warned about
    /// (file, line, the name to write) and errors about its value name it as written.
    func adoptingRenamedKeys() throws(ConfigError) -> ConfigTable {
        var adopted = self
        for renamed in RenamedKey.all where renamed.section == section.name && table.contains(key: renamed.old) {
            guard !table.contains(key: renamed.new) else {
                throw error(.invalidValue, key: renamed.old, "an old name of \(renamed.new), which is set too; keep one")
            }
            guard let value = table.remove(at: renamed.old) else { continue }
            table[renamed.new] = value
            adopted.writtenAs[renamed.new] = renamed.old
            source.warnings.add(
                ConfigWarning(
                    file: source.fileName,
                    line: source.locator.line(of: section, key: renamed.old),
                    section: section.label,
                    key: renamed.old,
                    message: "an old name; write \(renamed.new) (the same setting)"
                )
            )
        }
        return adopted
    }
}
