import Foundation

/// Start-up checks that need no running relay.
extension Relay {
    /// An expired TLS certificate stops start-up naming the file (lws would serve it).
    static func checkCertificates(_ config: RelayConfig) throws {
        let certificates: [(String, String?)] = [
            ("clawline", config.clawline?.tlsCertificatePath), ("gateway", config.gateway?.tlsCertificatePath),
            ("companion", config.companion?.tlsCertificatePath), ("discoclaw", config.discoClaw?.tlsCertificatePath),
        ]
        for case (let section, let path?) in certificates {
            guard let notAfter = CertificateDates.notAfter(pemPath: path) else {
                throw StartupFailure(description: "[\(section)] tls_cert \(path) holds no PEM certificate (is it the key?)")
            }
            if notAfter < Date() {
                throw StartupFailure(
                    description: "[\(section)] tls_cert \(path) expired on \(ISO8601DateFormatter().string(from: notAfter)); renew it"
                )
            }
        }
    }

    /// A child-process backend's program must be there at start-up, not fail every turn later.
    static func requireExecutable(_ command: [String], backend: String) throws(StartupFailure) {
        guard let program = command.first, executable(program) else {
            let program = command.first ?? ""
            throw StartupFailure(
                description: "[[backends]] \(backend): the program \(program) is missing or not executable (a bare name is looked up in PATH)"
            )
        }
    }

    /// True when `program` (a path, or a bare name looked up in PATH) can be run.
    static func executable(_ program: String) -> Bool {
        if program.contains("/") { return access(program, X_OK) == 0 }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { access("\($0)/\(program)", X_OK) == 0 }
    }
}
