import Logging
import PostgresNIO
import Synchronization

/// Wakes its owner at each notification on one channel (`LISTEN`), on a connection of its own
/// that it reconnects (after 1 s) when lost: a hint to look now, so its owner keeps a slow poll
/// for what a lost connection missed.
///
/// - Important: `wake` runs on the watch's task: once LISTEN is in place (each connect), then
///   once per notification.
public final class PostgresChannelWatch: Sendable {
    private let settings: PostgresSettings
    private let channel: String
    private let applicationName: String
    private let logger: Logger
    private let wake: @Sendable () -> Void
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(settings: PostgresSettings, channel: String, applicationName: String, logger: Logger, wake: @escaping @Sendable () -> Void) {
        self.settings = settings
        self.channel = channel
        self.applicationName = applicationName
        self.logger = logger
        self.wake = wake
    }

    func start() {
        task.withLock { task in
            guard task == nil else { return }
            task = Task { [self] in await run() }
        }
    }

    /// Stops listening; the watch's task closes its connection as it ends.
    public func stop() {
        task.withLock { $0 }?.cancel()
    }

    private func run() async {
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: try settings.configuration(applicationName: applicationName),
                    id: 0,
                    logger: logger
                )
                do {
                    try await connection.listen(on: channel) { notifications in
                        wake()
                        for try await _ in notifications { wake() }
                    }
                } catch {
                    if !Task.isCancelled {
                        logger.warning(
                            "postgres: \(channel) watch lost its connection",
                            metadata: ["error": "\(PostgresStoreError.summary(of: error))"]
                        )
                    }
                }
                try? await connection.close()
            } catch {
                logger.warning("postgres: \(channel) watch cannot connect", metadata: ["error": "\(PostgresStoreError.summary(of: error))"])
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
