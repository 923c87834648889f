import ArgumentParser
import Foundation
import RelayCore
import RelayServer
import RelayStore
import TerminalQR

struct PairLink: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair-link",
        abstract: "Print a one-time optaplus://pair link (and its QR code) for a gateway client; it expires after 5 minutes.")

    @OptionGroup var options: DataOptions
    @Option(help: "Host the client should dial (default: the [gateway] listen host).") var host: String?
    @Option(help: "Port the client should dial (default: the [gateway] listen port).") var port: Int?
    @Option(help: "A wss:// address for remote pairing instead of host and port.") var remote: String?
    @Flag(name: .customLong("no-qr"), help: "Print only the link.") var noQR = false

    func run() throws {
        let config = options.loadExisting()
        let store: Store
        do { store = try Store(dataDirectory: config.dataDirectory, executor: nil) } catch { fail("\(error)") }
        var generator = SystemRandomNumberGenerator()
        let token = Base64URL.encode((0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let hash = Digest.sha256Hex(token)
        let expires = SystemClock().nowMillis() + 300_000
        let fingerprint = try store.write { db -> String in
            try PairingLinkQueries.addLink(db, tokenHash: hash, expiresAt: expires)
            return try PairingLinkQueries.fingerprint(db)
        }
        var query = URLComponents()
        if let remote {
            query.queryItems = [URLQueryItem(name: "remote", value: remote)]
        } else {
            let gateway = config.gateway
            query.queryItems = [
                URLQueryItem(name: "host", value: host ?? gateway?.host ?? "127.0.0.1"),
                URLQueryItem(name: "port", value: String(port ?? gateway?.port ?? 18789)),
            ]
        }
        query.queryItems! += [URLQueryItem(name: "fp", value: fingerprint), URLQueryItem(name: "token", value: token)]
        let link = "optaplus://pair?" + (query.percentEncodedQuery ?? "")
        print(link)
        if !noQR, let lines = TerminalQR.lines(for: link) { print(lines.joined(separator: "\n")) }
        FileHandle.standardError.write(Data("clawrelay: one-time link, valid for 5 minutes; the client sends its token in device.pair\n".utf8))
    }
}
