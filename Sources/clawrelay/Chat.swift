import ArgumentParser
import Dispatch
import Foundation
import GatewayWire
import Logging
import RelayChat
import RelayCore
import RelayServer
import RelayTransport

struct Chat: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Talk to every backend and conversation behind the relay, as a gateway operator.",
        discussion: """
            Scripts: --list prints the conversations, one per line (KEY, unread count, backend, name); \
            --send TEXT (or --send - to read it from stdin) streams the answer to stdout (to \
            --conversation KEY, a new conversation on --new BACKEND, or the session "main"). The first \
            run asks the relay to pair this terminal and waits until an operator approves it \
            (clawrelay devices approve <id>). The identity is kept in $XDG_CONFIG_HOME/clawrelay \
            (~/.config/clawrelay when XDG_CONFIG_HOME is not set).
            """
    )

    @Option(help: "The gateway listener (the relay's [gateway], or an OpenClaw gateway).") var url = "ws://127.0.0.1:18789"
    @Option(help: "This terminal's Ed25519 identity (0600; default $XDG_CONFIG_HOME/clawrelay/chat.key or ~/.config/clawrelay/chat.key).")
    var identity: String?
    @Flag(help: "Print the conversations, one per line, and exit.") var list = false
    @Option(help: "Send TEXT (- reads it from stdin), print the answer as it streams, and exit (non-zero if it fails).") var send: String?
    @Option(help: "The conversation (gateway session key) --send goes to.") var conversation: String?
    @Option(name: .customLong("new"), help: "Send to a new conversation on this backend.") var newBackend: String?
    @Flag(help: "Ring the terminal bell when a message arrives in a buffer you are not looking at.") var bell = false
    @Option(help: "Seconds to wait for pairing, the connection and the answer (1-86400).") var wait = 300

    func validate() throws {
        guard (1...86_400).contains(wait) else { throw ValidationError("--wait must be 1 to 86400 seconds") }
        guard conversation == nil || newBackend == nil else { throw ValidationError("--conversation and --new exclude each other") }
        guard send == nil || !list else { throw ValidationError("--list and --send exclude each other") }
        if let send, send.isEmpty { throw ValidationError("--send needs a non-empty text") }
        guard WebSocketURL(url) != nil else { throw ValidationError("--url \(url) is not a ws:// or wss:// address") }
    }

    func run() throws {
        guard let parsed = WebSocketURL(url) else { fail("--url \(url) is not a ws:// or wss:// address") }
        let message = try send.map { $0 == "-" ? try Self.readStandardInput() : $0 }
        let target = ServiceLoop.ClientTarget(host: parsed.host, port: parsed.port, path: parsed.path, tls: parsed.tls)
        let accountIdentity: AccountIdentity
        do { accountIdentity = try Self.identity(at: identity) } catch { fail("\(error)") }
        var logger = Logger(label: "clawrelay-chat")
        logger.logLevel = .error
        let loop = ServiceLoop(logger: logger)
        do { _ = try loop.start() } catch { fail("\(error)") }
        guard list || message != nil else {
            ChatApp(target: target, identity: accountIdentity, bell: bell, loop: loop, logger: logger).run()
            loop.stop(graceMillis: 500)
            return
        }
        let outcome = ChatOnce(
            list: list,
            send: message,
            destination: newBackend.map { .newConversation(backend: $0) } ?? .session(conversation ?? "main")
        )
        let code = outcome.run(on: loop, target: target, identity: accountIdentity, logger: logger, seconds: wait)
        loop.stop(graceMillis: 500)
        if code != 0 { Foundation.exit(code) }
    }

    /// `--identity FILE` (its folder and name), or the default location (`IdentityLocation`,
    /// whose note about an old default goes to stderr).
    static func identity(at path: String?) throws -> AccountIdentity {
        let file = path ?? ChatIdentity.defaultPath { ChatOnce.stderr("clawrelay chat: \($0)") }
        let name = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
        return try AccountIdentity(directory: (file as NSString).deletingLastPathComponent, account: name.isEmpty ? "chat" : name)
    }

    /// `--send -`: the message is stdin to its end, without the newline(s) `echo` or a file ends with.
    private static func readStandardInput() throws -> String {
        let data = FileHandle.standardInput.readDataToEndOfFile()
        guard let text = String(data: data, encoding: .utf8) else { throw ValidationError("--send -: stdin is not UTF-8 text") }
        var message = Substring(text)
        while message.last?.isNewline == true { message.removeLast() }
        guard !message.isEmpty else { throw ValidationError("--send -: stdin held no message") }
        return String(message)
    }
}
