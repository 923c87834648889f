import Foundation
import RelayTransport

/// Start-up checks that need no running relay (those over the file alone are `ConfigCheck`).
extension Relay {
    /// Every listener's address can be bound now (its host resolves, its port is free).
    static func checkListenAddresses(_ config: RelayConfig) throws {
        for (name, host, port) in config.listenAddresses {
            if let problem = ListenAddress.problem(host: host, port: port) {
                throw StartupFailure(description: "cannot listen on \(ListenEndpoint(host: host, port: port)) for [\(name)]: \(problem)")
            }
        }
    }

    /// True when `program` (a path, or a bare name looked up in PATH) can be run.
    static func executable(_ program: String) -> Bool {
        if program.contains("/") { return access(program, X_OK) == 0 }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { access("\($0)/\(program)", X_OK) == 0 }
    }
}
