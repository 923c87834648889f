import ArgumentParser
import CompanionBridge
import Foundation
import RelayServer

struct Companion: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Claude Companion listener tools.",
        subcommands: [Token.self],
        defaultSubcommand: Token.self
    )

    struct Token: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the token Companion apps and clients connect with.")
        @OptionGroup var options: DataOptions

        func run() throws {
            let config: RelayConfig
            do { config = try options.load() } catch { fail("\(error)") }
            if let configured = config.companion?.authToken { return print(configured) }
            guard let token = CompanionToken.load(in: config.dataDirectory) else {
                fail(
                    "no Companion token in \(config.dataDirectory) yet: start the relay once with a [companion] section (it generates one), or set [companion] auth_token"
                )
            }
            print(token)
        }
    }
}
