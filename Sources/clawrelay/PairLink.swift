import ArgumentParser
import Foundation
import RelayCore
import RelayServer
import TerminalQR

struct PairLink: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair-link",
        abstract: "Print a one-time optaplus://pair link (and its QR code) for a gateway client; it expires after 5 minutes."
    )

    @OptionGroup var options: DataOptions
    @Option(help: "Host the client should dial (default: the [gateway] listen host).") var host: String?
    @Option(help: "Port the client should dial (default: the [gateway] listen port).") var port: Int?
    @Option(help: "A wss:// address for remote pairing instead of host and port.") var remote: String?
    @Flag(name: .customLong("no-qr"), help: "Print only the link.") var noQR = false

    /// Where the gateway listens: as the running (or last) relay bound it (`listeners.json`), else
    /// as configured; nil when neither has a gateway.
    static func gatewayAddress(_ config: RelayConfig) -> (host: String, port: Int)? {
        let file = (config.dataDirectory as NSString).appendingPathComponent("listeners.json")
        if let data = FileManager.default.contents(atPath: file), let listeners = JSONValue.parse(Array(data)),
            let address = listeners["gateway"]?.stringValue, let colon = address.lastIndex(of: ":"),
            let port = Int(address[address.index(after: colon)...])
        {
            return (String(address[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port)
        }
        guard let gateway = config.gateway else { return nil }
        guard gateway.port != 0 else { fail("[gateway] listens on port 0 and no relay has said which port it got; start the relay or pass --port") }
        return (gateway.host, gateway.port)
    }

    func validate() throws {
        if let remote {
            guard let url = URL(string: remote), url.scheme == "wss" || url.scheme == "ws", url.host?.isEmpty == false else {
                throw ValidationError("--remote takes a ws:// or wss:// address such as wss://relay.example.com, got \(remote)")
            }
        }
        if let port, !(1...65_535).contains(port) { throw ValidationError("--port must be between 1 and 65535") }
    }

    func run() throws {
        let config = options.loadExisting()
        guard let gateway = Self.gatewayAddress(config) else {
            fail("the relay has no [gateway] listener, so no client could use a pairing link; add [gateway] and restart the relay")
        }
        let dialHost = host ?? gateway.host
        // Loopback, or a wildcard address no client can dial.
        if remote == nil, ListenEndpoint(host: dialHost, port: gateway.port).isLoopback || ["0.0.0.0", "::", ""].contains(dialHost) {
            FileHandle.standardError.write(
                Data(
                    "clawrelay: the link points at \(dialHost), which a phone cannot reach; pass --host <this machine's LAN address> (and listen there with allow_public) or --remote wss://…\n"
                        .utf8
                )
            )
        }
        let store = options.openStore()
        var generator = SystemRandomNumberGenerator()
        let token = Base64URL.encode((0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let hash = Digest.sha256Hex(token)
        let expires = SystemClock().nowMillis() + 300_000
        let fingerprint = try store.addPairingLink(tokenHash: hash, expiresAt: expires)
        var query = URLComponents()
        if let remote {
            query.queryItems = [URLQueryItem(name: "remote", value: remote)]
        } else {
            query.queryItems = [
                URLQueryItem(name: "host", value: dialHost),
                URLQueryItem(name: "port", value: String(port ?? gateway.port)),
            ]
        }
        query.queryItems! += [URLQueryItem(name: "fp", value: fingerprint), URLQueryItem(name: "token", value: token)]
        let link = "optaplus://pair?" + (query.percentEncodedQuery ?? "")
        print(link)
        if !noQR, let lines = TerminalQR.lines(for: link) { print(lines.joined(separator: "\n")) }
        FileHandle.standardError.write(Data("clawrelay: one-time link, valid for 5 minutes; the client sends its token in device.pair\n".utf8))
    }
}
