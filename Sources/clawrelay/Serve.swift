import ArgumentParser
import Dispatch
import Foundation
import Logging
import RelayServer

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the relay until SIGTERM or SIGINT.")

    @OptionGroup var options: DataOptions

    func run() throws {
        let config: RelayConfig
        do { config = try options.load() } catch { fail("\(error)") }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = Logger.Level(rawValue: config.logLevel) ?? .info
            return handler
        }
        let logger = Logger(label: "clawrelay")
        let relay = Relay(config: config, logger: logger)
        do { try relay.start() } catch { fail("\(error)") }

        let order = ["clawline", "gateway", "companion", "discoclaw", "admin"]
        let addresses = relay.boundAddresses.sorted { (order.firstIndex(of: $0.key) ?? 99) < (order.firstIndex(of: $1.key) ?? 99) }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        print("clawrelay ready \(addresses)")
        fflush(nil)
        logger.info("relay started", metadata: ["data_dir": "\(config.dataDirectory)", "listeners": "\(addresses)"])

        let stopped = DispatchSemaphore(value: 0)
        var sources: [DispatchSourceSignal] = []
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { stopped.signal() }
            source.resume()
            sources.append(source)
        }
        stopped.wait()
        logger.info("stopping: closing sockets and flushing the store")
        relay.stop()
        logger.info("stopped")
        _ = sources
    }
}
