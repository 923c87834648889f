/// A `listen` address: `host:port`, or `[v6-address]:port`. Port 0 asks the system for a free port.
public struct ListenEndpoint: Sendable, Equatable, LosslessStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port`; nil if malformed (see `parse` for the reason).
    public init?(_ description: String) {
        guard let endpoint = try? Self.parse(description) else { return nil }
        self = endpoint
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Whether binding here keeps the listener on this machine: 127.0.0.0/8, ::1 or localhost.
    public var isLoopback: Bool {
        let lowered = host.lowercased()
        if lowered == "localhost" || lowered == "::1" || lowered == "0:0:0:0:0:0:0:1" { return true }
        let octets = lowered.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets.allSatisfy({ $0.count <= 3 && UInt8($0) != nil }) else { return false }
        return octets[0] == "127"
    }

    /// Why a `listen` string is unusable.
    struct Invalid: Error {
        let reason: String
    }

    static func parse(_ text: String) throws(Invalid) -> ListenEndpoint {
        let example = #"expected "host:port" such as "127.0.0.1:8787" or "[::1]:8787", got \#(quoted(text))"#
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[close...].hasPrefix("]:") else { throw Invalid(reason: example) }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
            guard host.contains(":"), host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." || $0 == "%" }) else {
                throw Invalid(reason: "\(quoted(String(host))) is not an IPv6 address")
            }
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw Invalid(reason: example) }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") {
                throw Invalid(reason: #"IPv6 addresses need brackets, e.g. "[\#(host)]:\#(portText)""#)
            }
            let allowed = host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
            guard allowed else { throw Invalid(reason: "\(quoted(String(host))) is not a host name or address") }
        }
        guard !host.isEmpty else { throw Invalid(reason: "missing host in \(quoted(text)); use 0.0.0.0 for every interface") }
        guard !portText.isEmpty, portText.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(portText), (0...65_535).contains(port) else {
            throw Invalid(reason: "port must be a number from 0 to 65535, got \(quoted(String(portText)))")
        }
        return ListenEndpoint(host: String(host), port: port)
    }
}
