import ArgumentParser
import Foundation
import Logging
import RelayCore
import RelayServer

@main
struct ClawRelay: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clawrelay",
        abstract: "A multi-account message bridge and relay for AI assistant clients.",
        version: "clawrelay \(RelayVersion.current)",
        subcommands: [
            Serve.self, CheckConfig.self, Chat.self, Devices.self, Accounts.self, Conversations.self, Approvals.self, PairLink.self, Companion.self,
            Audit.self, Backup.self, Bench.self, Migrate.self,
        ],
        defaultSubcommand: Serve.self
    )
}

/// `--config` and `--data-dir`, accepted by every subcommand.
struct DataOptions: ParsableArguments {
    @Option(name: .long, help: "TOML configuration file (default: the embedded default).")
    var config: String?

    @Option(name: .customLong("data-dir"), help: "Data directory (overrides [server] data_dir).")
    var dataDirectory: String?

    func load() throws -> RelayConfig {
        var loaded: RelayConfig
        if let config {
            loaded = try RelayConfig.load(path: config)
        } else {
            loaded = RelayConfig.embeddedDefault(dataDirectory: dataDirectory ?? "./.clawrelay")
        }
        if let dataDirectory { loaded.dataDirectory = dataDirectory }
        return loaded
    }

    /// The configuration the relay serving the data directory started from (`relay.json`), for
    /// tools that say what it does; `--config` wins. `recorded` is false when neither tells.
    func loadServed() -> (config: RelayConfig, recorded: Bool) {
        let existing = loadExisting()
        guard config == nil else { return (existing, true) }
        guard let record = ServedConfig.record(inDataDirectory: existing.dataDirectory) else { return (existing, false) }
        guard let recorded = record.file else { return (existing, true) }
        do {
            var served = try RelayConfig.load(path: recorded)
            served.dataDirectory = existing.dataDirectory
            return (served, true)
        } catch {
            fail("cannot read \(recorded), the configuration the relay started from (\(error)); pass --config")
        }
    }

    /// The relay's store, as `[store]` of the configuration it started from names it:
    /// `relay.sqlite` in the data directory, or its PostgreSQL database.
    func openStore() -> any OperatorStore {
        let config = loadServed().config
        do {
            // Errors come back as values; PostgresNIO's own log lines would only repeat them.
            return try OperatorStorage.open(config, logger: Logger(label: "clawrelay.cli") { _ in SwiftLogNoOpLogHandler() })
        } catch {
            fail("\(error)")
        }
    }

    /// The configuration for a tool that reads what a relay wrote: its data directory must exist.
    func loadExisting() -> RelayConfig {
        let config: RelayConfig
        do { config = try load() } catch { fail("\(error)") }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: config.dataDirectory, isDirectory: &isFolder) else {
            fail("no data directory at \(config.dataDirectory): start the relay with this configuration first (clawrelay serve), or pass --data-dir")
        }
        guard isFolder.boolValue else { fail("the data directory \(config.dataDirectory) is a file; point data_dir (or --data-dir) at a folder") }
        return config
    }
}

/// Prints a readable error and exits non-zero instead of ArgumentParser's usage text.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("clawrelay: \(message)\n".utf8))
    Foundation.exit(1)
}
