import Foundation
import RelayKit
import RelayTransport

/// A link's retry reports as a person reads them. lws says "Unable to connect" for every failed
/// connect; before such a report is shown, a plain connect to the target (``ConnectProbe``, on a
/// thread of its own) says what happened: "could not connect to ws://127.0.0.1:18789: connection
/// refused; next try in 2.5 s". Reports of a connection the relay closed are shown as they are.
///
/// - Important: loop thread only.
public final class ConnectExplainer {
    /// `ws://host:port` (no path: it may carry a token).
    public let address: String
    private let target: ServiceLoop.ClientTarget
    private let loop: ServiceLoop
    private var probing = false
    /// How long one probe waits for an answer.
    static let probeMillis = 2_000

    public init(target: ServiceLoop.ClientTarget, loop: ServiceLoop) {
        self.target = target
        self.loop = loop
        let host = target.host.contains(":") ? "[\(target.host)]" : target.host
        address = "\(target.tls ? "wss" : "ws")://\(host):\(target.port)"
    }

    /// What to show for a report: `detail` (the link's words, with its `; next try in …`), and
    /// `unreachable` when the probe found why nothing could connect.
    public struct Explained: Sendable {
        public var detail: String
        /// "could not connect to ws://127.0.0.1:18789: connection refused".
        public var unreachable: String?
    }

    /// Calls `report` with the words to show for `detail` (at once, or after a probe); a report
    /// that comes while a probe runs is dropped (the probe's report is about the same failure).
    public func explain(_ state: LinkState, _ detail: String, report: @escaping (Explained) -> Void) {
        let (cause, rest) = Self.split(detail)
        guard state == .retrying, !cause.contains("closed the connection") else { return report(Explained(detail: detail)) }
        guard !probing else { return }
        probing = true
        let (host, port, loop) = (target.host, target.port, self.loop)
        let done = LoopBound(
            { [self] (failure: String?) in
                probing = false
                let unreachable = failure.map { "could not connect to \(address): \($0)" }
                report(Explained(detail: unreachable.map { $0 + rest } ?? detail, unreachable: unreachable))
            },
            loop: loop
        )
        let thread = Thread {
            let failure = ConnectProbe.failure(host: host, port: port, timeoutMillis: Self.probeMillis)
            loop.execute { done.value(failure) }
        }
        thread.name = "clawrelay-chat-probe"
        thread.start()
    }

    /// A report's cause and the link's `; next try in …` after it (empty when it has none).
    private static func split(_ detail: String) -> (cause: String, rest: String) {
        guard let range = detail.range(of: "; next try in ") else { return (detail, "") }
        return (String(detail[..<range.lowerBound]), String(detail[range.lowerBound...]))
    }
}
