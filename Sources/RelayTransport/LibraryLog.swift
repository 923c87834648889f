internal import CLibWebSockets
import Foundation
import Logging
import Synchronization

/// libwebsockets' own error lines, rate-limited: any client can make lws log (a `CONNECT`
/// request, oversized headers), so at most `burst` lines a minute reach the log, and the count of
/// the ones dropped is reported with the next line let through.
final class LibraryLog: Sendable {
    static let burst = 10
    static let windowMillis: UInt64 = 60_000

    private struct Window {
        var startedAt: UInt64 = 0
        var emitted = 0
        var suppressed = 0
    }

    private let logger: Logger
    private let window = Mutex(Window())

    init(logger: Logger) { self.logger = logger }

    func emit(level: Int32, line: String) {
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        let (allowed, dropped): (Bool, Int) = window.withLock { window in
            if now - window.startedAt >= Self.windowMillis {
                window.startedAt = now
                window.emitted = 0
            }
            guard window.emitted < Self.burst else {
                window.suppressed += 1
                return (false, 0)
            }
            window.emitted += 1
            defer { window.suppressed = 0 }
            return (true, window.suppressed)
        }
        guard allowed else { return }
        var metadata: Logger.Metadata = ["source": "libwebsockets"]
        if dropped > 0 { metadata["suppressed"] = "\(dropped)" }
        let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
        if level & Int32(LLL_ERR) != 0 { logger.warning("\(text)", metadata: metadata) } else { logger.debug("\(text)", metadata: metadata) }
    }

    /// The one sink lws logs to (lws has one global log callback).
    nonisolated(unsafe) static var current: LibraryLog?
}

let libraryLogEmit: @convention(c) (Int32, UnsafePointer<CChar>?) -> Void = { level, line in
    guard let line, let sink = LibraryLog.current else { return }
    sink.emit(level: level, line: String(cString: line))
}
