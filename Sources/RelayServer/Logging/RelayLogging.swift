import Logging
import Synchronization

/// The relay's log level and format, which a reload may change while every logger made from it
/// runs: each handler reads them per message. The command line (`--log-level`,
/// `CLAWRELAY_LOG_LEVEL`) may pin the level, and then the file's `log_level` does not move it.
public final class RelayLogging: Sendable {
    /// The level's index in `Logger.Level.allCases`, and whether lines are JSON: read by every
    /// log call (a filtered one too), so atomics rather than a lock.
    private let levelIndex: Atomic<Int>
    private let json: Atomic<Bool>
    /// The level the command line set; nil when the file decides.
    public let pinnedLevel: Logger.Level?

    public init(level: Logger.Level, json: Bool, pinned: Bool) {
        levelIndex = Atomic(Self.index(of: level))
        self.json = Atomic(json)
        pinnedLevel = pinned ? level : nil
    }

    public var level: Logger.Level { Logger.Level.allCases[levelIndex.load(ordering: .relaxed)] }
    public var isJSON: Bool { json.load(ordering: .relaxed) }

    /// Takes the file's `log_level` (unless the command line pinned one) and `log_format`.
    public func apply(level: Logger.Level, json: Bool) {
        levelIndex.store(Self.index(of: pinnedLevel ?? level), ordering: .relaxed)
        self.json.store(json, ordering: .relaxed)
    }

    private static func index(of level: Logger.Level) -> Int { Logger.Level.allCases.firstIndex(of: level) ?? 2 }

    /// A handler for `LoggingSystem.bootstrap`.
    public func handler(label: String) -> any LogHandler { SwitchedLogHandler(logging: self, label: label) }
}

/// Writes each message as text or JSON on stderr, at the level `RelayLogging` holds now.
struct SwitchedLogHandler: LogHandler {
    let logging: RelayLogging
    var text: StreamLogHandler
    var json: JSONLogHandler
    /// A level this logger set for itself (`logger.logLevel = …`), over the relay's.
    var ownLevel: Logger.Level?

    init(logging: RelayLogging, label: String) {
        self.logging = logging
        text = StreamLogHandler.standardError(label: label)
        text.logLevel = .trace
        json = JSONLogHandler(label: label, logLevel: .trace)
    }

    var logLevel: Logger.Level {
        get { ownLevel ?? logging.level }
        set { ownLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { text.metadata }
        set {
            text.metadata = newValue
            json.metadata = newValue
        }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { text[metadataKey: key] }
        set {
            text[metadataKey: key] = newValue
            json[metadataKey: key] = newValue
        }
    }

    func log(event: LogEvent) {
        if logging.isJSON { json.log(event: event) } else { text.log(event: event) }
    }
}
