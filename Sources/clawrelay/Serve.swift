import ArgumentParser
import Dispatch
import Foundation
import Logging
import RelayServer

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the relay until SIGTERM or SIGINT; SIGHUP reloads the configuration file."
    )

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
        // SIGTERM, SIGINT and SIGHUP stay blocked in every thread (threads inherit the mask) and
        // are taken with sigwait below, so a stop that arrives at any moment, even before "ready",
        // is kept, and a SIGHUP during start-up or the stop never ends the process.
        let stopSignals = Self.signals([SIGTERM, SIGINT])
        var handled = Self.signals([SIGTERM, SIGINT, SIGHUP])
        pthread_sigmask(SIG_BLOCK, &handled, nil)
        // Every file and folder the relay creates is its user's alone.
        umask(0o077)
        let config: RelayConfig
        do { config = try options.load() } catch { fail("\(error)") }
        let pinned = logLevel ?? ProcessInfo.processInfo.environment["CLAWRELAY_LOG_LEVEL"]
        let levelName = pinned ?? config.logLevel
        guard let level = Logger.Level(rawValue: levelName), RelayConfig.logLevels.contains(levelName) else {
            fail("log level \(levelName) is not one of \(RelayConfig.logLevels.joined(separator: ", "))")
        }
        let logging = RelayLogging(level: level, json: config.logFormat == "json", pinned: pinned != nil)
        LoggingSystem.bootstrap(logging.handler)
        let logger = Logger(label: "clawrelay")
        // A key under its old name: `FILE:LINE: [section] key: an old name; write NEW (...)`.
        for warning in config.warnings { logger.warning("\(warning)") }
        if let exposure = ConfigSecrets.exposure(of: config) { logger.warning("\(exposure)") }

        let relay = Relay(config: config, logger: logger, logging: logging)
        do { try relay.start() } catch { fail("\(error)") }

        let order = ["clawline", "gateway", "companion", "discoclaw", "admin"]
        let addresses = relay.boundAddresses.sorted { (order.firstIndex(of: $0.key) ?? 99) < (order.firstIndex(of: $1.key) ?? 99) }.map {
            "\($0.key)=\($0.value)"
        }.joined(separator: " ")
        print("clawrelay ready \(addresses)")
        fflush(nil)
        logger.info(
            "relay started",
            metadata: ["data_dir": "\(config.dataDirectory)", "listeners": "\(addresses)", "event_loop": "\(config.eventLoop.rawValue)"]
        )

        var received: Int32 = 0
        while sigwait(&handled, &received) == 0, received == SIGHUP {
            guard options.config != nil else {
                logger.notice("SIGHUP: nothing to reload (the relay runs the embedded default; start it with --config FILE)")
                continue
            }
            relay.reload { try options.load() }
        }
        logger.info(
            "stopping: closing sockets and flushing the store (a second SIGINT or SIGTERM exits at once)",
            metadata: ["signal": "\(received)"]
        )
        Self.exitOnSecondSignal(stopSignals, logger: logger)
        relay.stop()
        logger.info("stopped")
    }

    private static func signals(_ numbers: [Int32]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for number in numbers { sigaddset(&set, number) }
        return set
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
