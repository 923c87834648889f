import Foundation
import RelayCore
import RelayPush

/// The start-up checks that need no socket and no data directory, over a decoded file: each
/// backend's program can run, each listener's TLS certificate holds a certificate that has not
/// expired and its key a private key, and APNs' key is a `.p8` (with a readable CA file). `serve`
/// runs them before it touches anything, a reload before it applies, `check-config` alone; each
/// problem is located like a decoding error (`FILE:LINE: [section] key: …`).
public enum ConfigCheck {
    /// Every problem, in the order of their lines in the file.
    public static func problems(in config: RelayConfig, now: Date = Date()) -> [ConfigError] {
        let found = programs(config) + tls(config, now: now) + push(config)
        return found.enumerated().sorted { ($0.element.line ?? .max, $0.offset) < ($1.element.line ?? .max, $1.offset) }.map(\.element)
    }

    private static func programs(_ config: RelayConfig) -> [ConfigError] {
        config.backends.enumerated().compactMap { index, backend in
            let command: [String]
            switch backend.kind {
            case .command(let given, _, _, _): command = given
            case .claudeCode(let options): command = options.command
            default: return nil
            }
            let program = command.first ?? ""
            guard !Relay.executable(program) else { return nil }
            return config.error(
                .invalidValue,
                ConfigSection(name: "backends", occurrence: index),
                key: "command",
                "backend \(quoted(backend.name)): the program \(program) is missing or not executable (a bare name is looked up in PATH)"
            )
        }
    }

    private static func tls(_ config: RelayConfig, now: Date) -> [ConfigError] {
        var problems: [ConfigError] = []
        for (name, certificate, key) in config.tlsListeners {
            let section = ConfigSection(name: name, occurrence: nil)
            if let notAfter = CertificateDates.notAfter(pemPath: certificate) {
                if notAfter < now {
                    let day = ISO8601DateFormatter().string(from: notAfter)
                    problems.append(config.error(.invalidValue, section, key: "tls_cert", "\(certificate) expired on \(day); renew it"))
                }
            } else {
                problems.append(config.error(.invalidValue, section, key: "tls_cert", "\(certificate) holds no PEM certificate (is it the key?)"))
            }
            if !holdsPrivateKey(key) {
                problems.append(config.error(.invalidValue, section, key: "tls_key", "\(key) holds no PEM private key (is it the certificate?)"))
            }
        }
        return problems
    }

    /// A PEM block `-----BEGIN … PRIVATE KEY-----` (PKCS #8, RSA or EC).
    private static func holdsPrivateKey(_ path: String) -> Bool {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), let begin = text.range(of: "-----BEGIN ") else { return false }
        return text[begin.upperBound...].prefix(40).contains("PRIVATE KEY-----")
    }

    private static func push(_ config: RelayConfig) -> [ConfigError] {
        guard let push = config.push else { return [] }
        let section = ConfigSection(name: "push", occurrence: nil)
        var problems: [ConfigError] = []
        if let apns = push.apns {
            let file = Relay.path(apns.keyFile, relativeTo: config.sourcePath)
            if let pem = try? String(contentsOfFile: file, encoding: .utf8) {
                do {
                    _ = try APNsToken(pem: pem, keyID: apns.keyID, teamID: apns.teamID, clock: SystemClock())
                } catch {
                    problems.append(config.error(.invalidValue, section, key: "apns_key_file", "\(file) is not a .p8 (PKCS #8 P-256) key: \(error)"))
                }
            } else {
                problems.append(config.error(.invalidValue, section, key: "apns_key_file", "\(file) cannot be read"))
            }
        }
        if let caFile = push.caFile {
            let file = Relay.path(caFile, relativeTo: config.sourcePath)
            if !FileManager.default.isReadableFile(atPath: file) {
                problems.append(config.error(.invalidValue, section, key: "apns_ca_file", "\(file) cannot be read"))
            }
        }
        return problems
    }
}
