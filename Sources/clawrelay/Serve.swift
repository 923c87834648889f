import ArgumentParser
import Dispatch
import Foundation
import Logging
import RelayServer

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the relay until SIGTERM or SIGINT.")

    @OptionGroup var options: DataOptions
    @Option(
        name: .customLong("log-level"),
        help: "trace, debug, info, notice, warning or error (overrides [server] log_level and CLAWRELAY_LOG_LEVEL)."
    )
    var logLevel: String?

    func validate() throws {
        if let logLevel, !RelayConfig.logLevels.contains(logLevel) {
            throw ValidationError("--log-level \(logLevel) is not one of \(RelayConfig.logLevels.joined(separator: ", "))")
        }
    }

    func run() throws {
        // Every file and folder the relay creates is its user's alone.
        umask(0o077)
        let config: RelayConfig
        do { config = try options.load() } catch { fail("\(error)") }
        let levelName = logLevel ?? ProcessInfo.processInfo.environment["CLAWRELAY_LOG_LEVEL"] ?? config.logLevel
        guard let level = Logger.Level(rawValue: levelName), RelayConfig.logLevels.contains(levelName) else {
            fail("log level \(levelName) is not one of \(RelayConfig.logLevels.joined(separator: ", "))")
        }
        let json = config.logFormat == "json"
        LoggingSystem.bootstrap { label in
            if json { return JSONLogHandler(label: label, logLevel: level) }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "clawrelay")
        // A key under its old name: `FILE:LINE: [section] key: an old name; write NEW (...)`.
        for warning in config.warnings { logger.warning("\(warning)") }
        // SIGTERM and SIGINT stay blocked in every thread (threads inherit the mask) and are taken
        // with sigwait below, so a stop that arrives at any moment, even before "ready", is kept.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGTERM)
        sigaddset(&stopSignals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

        let relay = Relay(config: config, logger: logger)
        do { try relay.start() } catch { fail("\(error)") }

        let order = ["clawline", "gateway", "companion", "discoclaw", "admin"]
        let addresses = relay.boundAddresses.sorted { (order.firstIndex(of: $0.key) ?? 99) < (order.firstIndex(of: $1.key) ?? 99) }.map {
            "\($0.key)=\($0.value)"
        }.joined(separator: " ")
        print("clawrelay ready \(addresses)")
        fflush(nil)
        logger.info("relay started", metadata: ["data_dir": "\(config.dataDirectory)", "listeners": "\(addresses)"])

        var received: Int32 = 0
        sigwait(&stopSignals, &received)
        logger.info(
            "stopping: closing sockets and flushing the store (a second SIGINT or SIGTERM exits at once)",
            metadata: ["signal": "\(received)"]
        )
        Self.exitOnSecondSignal(stopSignals, logger: logger)
        relay.stop()
        logger.info("stopped")
    }

    /// A stop that hangs can be cut short: a second stop signal ends the process at once, with
    /// the exit status a shell gives a process killed by that signal (128 + its number).
    static func exitOnSecondSignal(_ signals: sigset_t, logger: Logger) {
        let thread = Thread {
            var waited = signals
            var again: Int32 = 0
            sigwait(&waited, &again)
            logger.warning("second stop signal: exiting without finishing the stop", metadata: ["signal": "\(again)"])
            _exit(128 + again)
        }
        thread.name = "second-signal"
        thread.start()
    }
}
