import ChatModel
import Foundation

/// Where `clawrelay chat` keeps its identity by default, from this process's environment.
public enum ChatIdentity {
    /// The key file `IdentityLocation` picks for `$XDG_CONFIG_HOME` and `$HOME` (the user's home
    /// from the password database when HOME is unset or empty); `note` hears what it says about
    /// an old default in use.
    public static func defaultPath(note: (String) -> Void) -> String {
        let environment = ProcessInfo.processInfo.environment
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let location = IdentityLocation.resolve(xdgConfigHome: environment["XDG_CONFIG_HOME"], home: home) {
            FileManager.default.fileExists(atPath: $0)
        }
        if let said = location.note { note(said) }
        return location.path
    }
}
