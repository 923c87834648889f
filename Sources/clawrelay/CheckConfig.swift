import ArgumentParser
import Foundation
import RelayServer

/// `clawrelay check-config`: the start-up checks that need no socket, without starting (like
/// `nginx -t`).
struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check a configuration file as start-up would (keys, values, backends' programs, TLS and APNs key files), without starting.",
        discussion: "Prints \"config OK: FILE\" and exits 0, or prints each problem as FILE:LINE: … and exits 1. Listen addresses are not tried."
    )

    @OptionGroup var options: DataOptions

    func run() throws {
        let config: RelayConfig
        do {
            config = try options.load()
        } catch {
            Self.printError("\(error)")
            throw ExitCode(1)
        }
        for warning in config.warnings { Self.printError("warning: \(warning)") }
        if let exposure = ConfigSecrets.exposure(of: config) { Self.printError("warning: \(exposure)") }
        let problems = ConfigCheck.problems(in: config)
        for problem in problems { Self.printError("\(problem)") }
        guard problems.isEmpty else { throw ExitCode(1) }
        print("config OK: \(options.config ?? "the embedded default")")
    }

    private static func printError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
