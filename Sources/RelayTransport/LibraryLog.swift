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
    /// lws's line for a request whose headers do not fit its header space; it names no client.
    static let headerOverflowLine = "Ran out of header data space"

    private struct Window {
        var startedAt: UInt64 = 0
        var emitted = 0
        var suppressed = 0
        /// The thread whose connection overflowed its header space, until the loop reports it.
        var overflowThread: UInt?
    }

    private let logger: Logger
    private let window = Mutex(Window())

    init(logger: Logger) { self.logger = logger }

    func emit(level: Int32, line: String) {
        if line.contains(Self.headerOverflowLine) {
            // Reported by the loop as the connection closes, with its remote address.
            window.withLock { $0.overflowThread = Self.currentThread }
            return
        }
        let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
        if level & Int32(LLL_ERR) != 0 { log(.warning, text) } else { log(.debug, text) }
    }

    /// Whether lws just said (on this thread) that a connection's headers overflowed; clears it.
    func takeHeaderOverflow() -> Bool {
        window.withLock { window in
            defer { if window.overflowThread == Self.currentThread { window.overflowThread = nil } }
            return window.overflowThread == Self.currentThread
        }
    }

    /// Logs within the same budget as lws's own lines (any client can cause them).
    func log(_ level: Logger.Level, _ text: String, metadata extra: Logger.Metadata = [:]) {
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
        var metadata: Logger.Metadata = ["source": "libwebsockets"].merging(extra) { $1 }
        if dropped > 0 { metadata["suppressed"] = "\(dropped)" }
        logger.log(level: level, "\(text)", metadata: metadata)
    }

    private static var currentThread: UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }

    /// The one sink lws logs to (lws has one global log callback).
    nonisolated(unsafe) static var current: LibraryLog?
}

let libraryLogEmit: @convention(c) (Int32, UnsafePointer<CChar>?) -> Void = { level, line in
    guard let line, let sink = LibraryLog.current else { return }
    sink.emit(level: level, line: String(cString: line))
}
