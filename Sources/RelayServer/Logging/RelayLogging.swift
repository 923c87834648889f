import Logging
import Synchronization

/// The relay's log level and format, which a reload may change while every logger made from it
/// runs: each handler reads them per message. The command line (`--log-level`,
/// `CLAWRELAY_LOG_LEVEL`) may pin the level, and then the file's `log_level` does not move it.
public final class RelayLogging: Sendable {
    private struct State {
        var level: Logger.Level
        var json: Bool
    }

    private let state: Mutex<State>
    /// The level the command line set; nil when the file decides.
    public let pinnedLevel: Logger.Level?

    public init(level: Logger.Level, json: Bool, pinned: Bool) {
        state = Mutex(State(level: level, json: json))
        pinnedLevel = pinned ? level : nil
    }

    public var level: Logger.Level { state.withLock { $0.level } }
    public var isJSON: Bool { state.withLock { $0.json } }

    /// Takes the file's `log_level` (unless the command line pinned one) and `log_format`.
    public func apply(level: Logger.Level, json: Bool) {
        state.withLock {
            $0.level = pinnedLevel ?? level
            $0.json = json
        }
    }

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

    func log(
        level: Logger.Level,
        message: Logger.Message,
        metadata: Logger.Metadata?,
        source: String,
        file: String,
        function: String,
        line: UInt
    ) {
        if logging.isJSON {
            json.log(level: level, message: message, metadata: metadata, source: source, file: file, function: function, line: line)
        } else {
            text.log(level: level, message: message, metadata: metadata, source: source, file: file, function: function, line: line)
        }
    }
}
