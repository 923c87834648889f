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
    /// Where `--send` goes.
    enum Destination: Sendable {
        /// A session key (`--conversation KEY`, or `main`).
        case session(String)
        /// A new conversation on a backend the relay must have (`--new BACKEND`).
        case newConversation(backend: String)
    }

    var list: Bool
    var send: String?
    var destination: Destination

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
            let explainer = ConnectExplainer(target: target, loop: loop)
            // What --wait's end says, as far as this run got.
            var waitingFor = "could not connect to \(explainer.address) within \(seconds) s (--wait)"
            var (reached, unreachable) = (false, nil as String?)
            var client: OperatorClient?
            client = OperatorClient(target: target, identity: box.value, loop: loop, logger: logger) { state, detail in
                switch state {
                case .awaitingApproval where !reached:
                    reached = true
                    waitingFor = "this terminal was not approved within \(seconds) s (--wait)"
                    let device = client?.deviceID ?? "?"
                    Self.stderr(
                        "This terminal is not paired with the relay yet (\(detail)).\nApprove it there with:\n  clawrelay devices approve \(device)\nWaiting…"
                    )
                case .connected:
                    guard let client else { return }
                    reached = true
                    waitingFor = "no answer within \(seconds) s (--wait)"
                    job.act(on: client, finish: finish)
                case .badCredentials, .failed:
                    Self.stderr("the relay refused this terminal: \(detail)")
                    finish(1)
                case .retrying where !reached:
                    // Said once (a script may start before its relay); --wait's end says it again.
                    explainer.explain(state, detail) { explained in
                        guard !reached, let why = explained.unreachable else { return }
                        if unreachable == nil { Self.stderr("\(why); trying again for up to \(seconds) s (--wait)") }
                        unreachable = why
                        waitingFor = "\(why) (gave up after \(seconds) s, --wait)"
                    }
                default:
                    break
                }
            }
            // The state closure holds `client` (and the client its link, and the link the
            // closure), so it lives until the process ends.
            client?.connect()
            loop.schedule(afterMillis: seconds * 1000) {
                Self.stderr(waitingFor)
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
        switch destination {
        case .session(let key):
            Self.send(text, to: key, on: client, finish: finish)
        case .newConversation(let backend):
            Self.backend(named: backend, on: client) { found in
                guard let found else { return finish(1) }
                Self.send(text, to: "backend:\(found):\(Identifiers.newUUID().prefix(8))", on: client, finish: finish)
            }
        }
    }

    /// The relay's spelling of `name` from `backends.list`; nil (said on stderr) when it has none
    /// by that name. A gateway without `backends.list` (a real OpenClaw gateway) takes the name as given.
    private static func backend(named name: String, on client: OperatorClient, then: @escaping (String?) -> Void) {
        client.call("backends.list") { result in
            guard case .success(let payload) = result, let names = GatewayJSON.decode(BackendsList.self, from: payload)?.backends.map(\.name)
            else { return then(name) }
            if let found = names.first(where: { $0.lowercased() == name.lowercased() }) { return then(found) }
            stderr("no backend named \(name) on the relay; it has: \(names.sorted().joined(separator: ", "))")
            then(nil)
        }
    }

    /// Streams the answer to stdout; once it is all there, it is read (`sessions.markRead`).
    private static func send(_ text: String, to key: String, on client: OperatorClient, finish: @escaping @Sendable (Int32) -> Void) {
        var shown = ""
        client.send(text, to: key) { event in
            switch event {
            case .progress(let whole):
                write(whole, after: &shown)
            case .final(let whole, let seq):
                write(whole, after: &shown)
                print("")
                fflush(nil)
                guard let seq else { return finish(0) }
                // Whatever the answer (a gateway without the method says no), it was shown.
                client.call("sessions.markRead", MarkReadParams(key: key, seq: seq)) { _ in finish(0) }
            case .failed(let reason):
                if !shown.isEmpty { print("") }
                fflush(nil)
                stderr(reason)
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
