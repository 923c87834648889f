/// Where `clawrelay chat` keeps its identity (the key, and the device token beside it) when no
/// `--identity` is given: `$XDG_CONFIG_HOME/clawrelay/chat.key`, or
/// `$HOME/.config/clawrelay/chat.key` when XDG_CONFIG_HOME is unset, empty or not absolute (the
/// XDG base directory spec's rule).
///
/// Before XDG_CONFIG_HOME was honoured the key was always under `$HOME/.config`. When
/// XDG_CONFIG_HOME points elsewhere, has no key yet and the old file exists, the old file stays
/// in use where it is (moving it could leave another environment without its key, and a new key
/// would mean pairing again) and ``note`` says so, with how to move it.
public struct IdentityLocation: Equatable, Sendable {
    /// The key file.
    public var path: String
    /// Said once on stderr: the key used is at the old default place.
    public var note: String?

    public init(path: String, note: String? = nil) {
        self.path = path
        self.note = note
    }

    public static let folderName = "clawrelay"
    public static let fileName = "chat.key"

    /// The default location. `fileExists` is asked about the two candidate key files only.
    public static func resolve(xdgConfigHome: String?, home: String, fileExists: (String) -> Bool) -> IdentityLocation {
        let legacy = join(home, ".config", folderName, fileName)
        guard let xdg = xdgConfigHome, xdg.hasPrefix("/") else { return IdentityLocation(path: legacy) }
        let preferred = join(xdg, folderName, fileName)
        guard preferred != legacy, !fileExists(preferred), fileExists(legacy) else { return IdentityLocation(path: preferred) }
        let folder = join(xdg, folderName)
        return IdentityLocation(
            path: legacy,
            note: "using this terminal's identity at \(legacy), where it was kept before XDG_CONFIG_HOME was honoured; "
                + "to keep it in \(folder) instead: mkdir -p \(folder) && mv \(join(home, ".config", folderName))/chat.* \(folder)/"
        )
    }

    /// Path parts joined with single slashes (a trailing slash on `XDG_CONFIG_HOME` is common).
    private static func join(_ first: String, _ rest: String...) -> String {
        var path = first
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        for part in rest { path += (path.hasSuffix("/") ? "" : "/") + part }
        return path
    }
}
