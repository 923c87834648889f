import Foundation

/// A configuration file that holds secrets and that other users may read.
public enum ConfigSecrets {
    /// The secrets `config` sets, as the file names them: `[discoclaw] setup_token`,
    /// `[[backends]] cmd env`, …
    public static func keys(in config: RelayConfig) -> [String] {
        var keys: [String] = []
        if config.gateway?.sharedToken != nil { keys.append("[gateway] shared_token") }
        if config.gateway?.password != nil { keys.append("[gateway] password") }
        if config.companion?.authToken != nil { keys.append("[companion] auth_token") }
        if config.discoClaw?.setupToken != nil { keys.append("[discoclaw] setup_token") }
        if config.discoClaw?.users.isEmpty == false { keys.append("[[discoclaw.users]] setup_token") }
        if config.push?.ntfyToken != nil { keys.append("[push] ntfy_token") }
        if config.push?.webhooks.isEmpty == false { keys.append("[[push.webhooks]] secret") }
        for backend in config.backends {
            let secret: String? =
                switch backend.kind {
                case .command(_, _, _, let environment): environment.isEmpty ? nil : "env"
                case .claudeCode(let options): options.environment.isEmpty ? nil : "env"
                case .companion: "token"
                case .discoclaw(_, .token, _, _): "token"
                case .discoclaw(_, .setupToken, _, _): "setup_token"
                default: nil
                }
            if let secret { keys.append("[[backends]] \(backend.name) \(secret)") }
        }
        return keys
    }

    /// A warning when `config`'s file is readable by its group or others and holds secrets,
    /// naming the file, its mode and the keys; nil otherwise (or without a file).
    public static func exposure(of config: RelayConfig) -> String? {
        guard let path = config.sourcePath,
            let mode = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int, mode & 0o044 != 0
        else { return nil }
        let keys = keys(in: config)
        guard !keys.isEmpty else { return nil }
        let octal = "0" + String(mode & 0o777, radix: 8)
        return "\(path) is readable by other users (mode \(octal)) and holds secrets (\(keys.joined(separator: ", "))); chmod 600 \(path)"
    }
}
