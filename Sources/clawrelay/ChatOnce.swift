import Dispatch
import Foundation
import GatewayWire
import Logging
import RelayChat
import RelayCore
import RelayTransport
import Synchronization

/// One non-interactive `clawrelay chat` run: connect (waiting for pairing), then list or send.
struct ChatOnce: Sendable {
    var list: Bool
    var send: String?
    var key: String

    /// Runs on `loop` and blocks until done; returns the exit code.
    func run(on loop: ServiceLoop, target: ServiceLoop.ClientTarget, identity: AccountIdentity, logger: Logger, seconds: Int) -> Int32 {
        let code = Mutex<Int32?>(nil)
        let done = DispatchSemaphore(value: 0)
        let finish: @Sendable (Int32) -> Void = { value in
            guard
                code.withLock({ current in
                    defer { if current == nil { current = value } }
                    return current == nil
                })
            else { return }
            done.signal()
        }
        let job = self
        let box = UncheckedSendable(identity)
        loop.execute {
            var client: OperatorClient?
            var toldToApprove = false
            client = OperatorClient(target: target, identity: box.value, loop: loop, logger: logger) { state, detail in
                switch state {
                case .awaitingApproval where !toldToApprove:
                    toldToApprove = true
                    let device = client?.deviceID ?? "?"
                    Self.stderr(
                        "This terminal is not paired with the relay yet (\(detail)).\nApprove it there with:\n  clawrelay devices approve \(device)\nWaiting…"
                    )
                case .connected:
                    guard let client else { return }
                    job.act(on: client, finish: finish)
                case .badCredentials, .failed:
                    Self.stderr("the relay refused this terminal: \(detail)")
                    finish(1)
                default:
                    break
                }
            }
            // The state closure holds `client` (and the client its link, and the link the
            // closure), so it lives until the process ends.
            client?.connect()
            loop.schedule(afterMillis: seconds * 1000) {
                Self.stderr("gave up after \(seconds) s (--wait)")
                finish(1)
            }
        }
        done.wait()
        return code.withLock { $0 } ?? 1
    }

    /// Loop thread: the link is up.
    private func act(on client: OperatorClient, finish: @escaping @Sendable (Int32) -> Void) {
        if list {
            client.call("sessions.list") { result in
                switch result {
                case .failure(let error):
                    Self.stderr("sessions.list failed: \(error)")
                    finish(1)
                case .success(let payload):
                    for session in payload["sessions"]?.arrayValue ?? [] { print(Self.line(session)) }
                    fflush(nil)
                    finish(0)
                }
            }
            return
        }
        guard let text = send else { return finish(2) }
        var shown = ""
        client.send(text, to: key) { event in
            switch event {
            case .progress(let whole):
                Self.write(whole, after: &shown)
            case .final(let whole):
                Self.write(whole, after: &shown)
                print("")
                fflush(nil)
                finish(0)
            case .failed(let reason):
                if !shown.isEmpty { print("") }
                Self.stderr("the answer failed: \(reason)")
                finish(1)
            }
        }
    }

    /// Prints what `whole` adds to what was shown (a rewrite starts a new line).
    private static func write(_ whole: String, after shown: inout String) {
        if whole.hasPrefix(shown) {
            FileHandle.standardOutput.write(Data(whole.dropFirst(shown.count).utf8))
        } else {
            FileHandle.standardOutput.write(Data(("\n" + whole).utf8))
        }
        shown = whole
    }

    /// `KEY<TAB>UNREAD<TAB>BACKEND<TAB>NAME` (unknown fields as `-`).
    static func line(_ session: JSONValue) -> String {
        let key = session["key"]?.stringValue ?? "?"
        let unread = session["unreadCount"]?.intValue.map(String.init) ?? "-"
        let backend = session["backend"]?.stringValue ?? "-"
        let name = session["displayName"]?.stringValue ?? session["label"]?.stringValue ?? key
        return [key, unread, backend, name.replacingOccurrences(of: "\n", with: " ")].joined(separator: "\t")
    }

    static func stderr(_ message: String) { FileHandle.standardError.write(Data((message + "\n").utf8)) }
}

/// Carries a loop-owned value into a loop job.
private struct UncheckedSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
