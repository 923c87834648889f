import CCurl
import Foundation
import Logging
import RelayCore
import Synchronization

/// The thread behind `HTTPClient`: one curl multi handle, its connection cache and the requests on it.
///
/// `@unchecked Sendable` holds because `transfers` and every easy handle are touched only on this
/// thread; other threads reach it through the locked `mailbox` and `curl_multi_wakeup`
/// (which libcurl allows from any thread), called under the lock while the multi handle is open.
final class HTTPThread: @unchecked Sendable {
    private struct Submission {
        let request: HTTPRequest
        let completion: @Sendable (Result<HTTPResponse, HTTPFailure>) -> Void
    }

    private struct Mailbox {
        var queued: [Submission] = []
        /// Queued plus in flight: what the cap counts.
        var outstanding = 0
        /// Set once: why new requests are refused (shut down, libcurl unavailable).
        var refusal: String?
        var multiClosed = false
        var reportedFull = false
    }

    private static let curlReady: Bool = relay_curl_global_init() == CURLE_OK
    private static let shuttingDown = "the HTTP client is shutting down"

    private let multi: UnsafeMutableRawPointer?
    private let name: String
    private let caFile: String?
    private let maxOutstanding: Int
    private let logger: Logger
    private let userAgent = "clawrelay/\(RelayVersion.current)"
    private let mailbox = Mutex(Mailbox())
    private let threadID = Atomic<UInt>(0)
    private let finished = DispatchSemaphore(value: 0)
    private var transfers: [UnsafeMutableRawPointer: HTTPTransfer] = [:]

    init(name: String, caFile: String?, maxOutstanding: Int, logger: Logger) {
        self.name = name
        self.caFile = caFile
        self.maxOutstanding = max(1, maxOutstanding)
        self.logger = logger
        multi = Self.curlReady ? curl_multi_init() : nil
        guard let multi else {
            logger.error("libcurl could not start; every HTTP request will fail", metadata: ["thread": "\(name)"])
            mailbox.withLock {
                $0.refusal = "libcurl could not start"
                $0.multiClosed = true
            }
            return
        }
        // Concurrent requests to one endpoint share one HTTP/2 connection; idle ones stay cached.
        _ = relay_curl_multi_set_long(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX)
        _ = relay_curl_multi_set_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, 2)
        _ = relay_curl_multi_set_long(multi, CURLMOPT_MAXCONNECTS, 16)
        let thread = Thread { [self] in
            Thread.nameCurrent(name)
            self.run()
        }
        thread.name = name
        thread.start()
    }

    deinit {
        // Only when the thread never ran: it closes the handle itself on the way out.
        if let multi, !mailbox.withLock({ $0.multiClosed }) { curl_multi_cleanup(multi) }
    }

    private var isOnThread: Bool { threadID.load(ordering: .acquiring) == UInt(bitPattern: Int(bitPattern: pthread_self())) }

    /// Queues `request`, or fails it at once (on the caller's thread) when refused.
    func submit(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, HTTPFailure>) -> Void) {
        let (refusal, reportFull) = mailbox.withLock { box -> (String?, Bool) in
            if let refusal = box.refusal { return (refusal, false) }
            guard box.outstanding < maxOutstanding else {
                defer { box.reportedFull = true }
                return ("\(maxOutstanding) \(name) requests already outstanding", !box.reportedFull)
            }
            box.outstanding += 1
            box.queued.append(Submission(request: request, completion: completion))
            if box.queued.count == 1, let multi { _ = curl_multi_wakeup(multi) }
            return (nil, false)
        }
        if reportFull {
            logger.warning("HTTP requests refused: too many outstanding", metadata: ["thread": "\(name)", "limit": "\(maxOutstanding)"])
        }
        if let refusal { completion(.failure(.transport(refusal))) }
    }

    /// Refuses new requests, fails the queued and in-flight ones, and, unless called on the thread
    /// itself, waits for the thread to end.
    func stop() {
        mailbox.withLock { box in
            if box.refusal == nil { box.refusal = Self.shuttingDown }
            if !box.multiClosed, let multi { _ = curl_multi_wakeup(multi) }
        }
        guard multi != nil, !isOnThread else { return }
        finished.wait()
        finished.signal()  // for the next caller
    }

    // MARK: - The thread

    private func run() {
        guard let multi else { return }
        threadID.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .releasing)
        logger.debug("HTTP thread started", metadata: ["thread": "\(name)"])
        while true {
            let (batch, stopping) = mailbox.withLock { box in
                defer { box.queued.removeAll() }
                return (box.queued, box.refusal != nil)
            }
            if stopping {
                cancelAll(queued: batch, multi: multi)
                break
            }
            for submission in batch { begin(submission, multi: multi) }
            var running: Int32 = 0
            let performed = curl_multi_perform(multi, &running)
            if performed != CURLM_OK {
                logger.error("curl_multi_perform failed", metadata: ["error": "\(String(cString: curl_multi_strerror(performed)))"])
            }
            collectFinished(multi: multi)
            // Returns early on socket activity, libcurl's own timers or `curl_multi_wakeup`.
            let polled = curl_multi_poll(multi, nil, 0, 1_000, nil)
            if polled != CURLM_OK {
                logger.error("curl_multi_poll failed", metadata: ["error": "\(String(cString: curl_multi_strerror(polled)))"])
                usleep(100_000)  // not a busy loop while polling keeps failing
            }
        }
        mailbox.withLock { $0.multiClosed = true }
        curl_multi_cleanup(multi)
        logger.debug("HTTP thread stopped", metadata: ["thread": "\(name)"])
        finished.signal()
    }

    private func begin(_ submission: Submission, multi: UnsafeMutableRawPointer) {
        guard let easy = curl_easy_init() else {
            return complete(submission.completion, .failure(.transport("libcurl could not create a request handle")))
        }
        let transfer = HTTPTransfer(easy: easy, completion: submission.completion)
        if let failure = transfer.configure(submission.request, caFile: caFile, userAgent: userAgent) {
            return complete(transfer.completion, .failure(failure))
        }
        let added = curl_multi_add_handle(multi, easy)
        guard added == CURLM_OK else {
            return complete(transfer.completion, .failure(.transport(String(cString: curl_multi_strerror(added)))))
        }
        transfers[easy] = transfer
    }

    private func collectFinished(multi: UnsafeMutableRawPointer) {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = relay_curl_msg_result(message)
            _ = curl_multi_remove_handle(multi, easy)
            guard let transfer = transfers.removeValue(forKey: easy) else { continue }
            let outcome = transfer.outcome(code)
            if case .failure(let failure) = outcome { logger.debug("HTTP request failed", metadata: ["thread": "\(name)", "error": "\(failure)"]) }
            complete(transfer.completion, outcome)
        }
    }

    private func cancelAll(queued: [Submission], multi: UnsafeMutableRawPointer) {
        let inFlight = transfers.map { $0.value.completion }
        for easy in transfers.keys { _ = curl_multi_remove_handle(multi, easy) }
        transfers.removeAll()
        for completion in inFlight + queued.map(\.completion) { complete(completion, .failure(.transport(Self.shuttingDown))) }
    }

    private func complete(_ completion: @Sendable (Result<HTTPResponse, HTTPFailure>) -> Void, _ result: Result<HTTPResponse, HTTPFailure>) {
        mailbox.withLock { box in
            box.outstanding -= 1
            if box.outstanding < maxOutstanding { box.reportedFull = false }
        }
        completion(result)
    }
}
