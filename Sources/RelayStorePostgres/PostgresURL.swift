import Foundation

/// The parts of a `postgres://` URL (`PostgresSettings` adds the password's other sources).
struct PostgresURL {
    var username: String
    var password: String?
    var database: String
    var endpoint: PostgresSettings.Endpoint
    var tlsMode: PostgresSettings.TLSMode

    init(_ url: String) throws {
        let schemes = ["postgres://", "postgresql://"]
        guard let scheme = schemes.first(where: { url.hasPrefix($0) }) else {
            throw Self.invalid("must start with postgres:// or postgresql://")
        }
        var rest = Substring(url.dropFirst(scheme.count))
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        guard let slash = rest.firstIndex(of: "/") else { throw Self.invalid("names no database (…/database)") }
        let authority = rest[..<slash]
        database = try Self.decode(rest[rest.index(after: slash)...], "database")
        guard !database.isEmpty, !database.contains("/") else { throw Self.invalid("names no database (…/database)") }
        guard let at = authority.lastIndex(of: "@") else { throw Self.invalid("names no user (postgres://user@host/database)") }
        let userInfo = authority[..<at]
        if let colon = userInfo.firstIndex(of: ":") {
            username = try Self.decode(userInfo[..<colon], "user")
            password = try Self.decode(userInfo[userInfo.index(after: colon)...], "password")
        } else {
            username = try Self.decode(userInfo, "user")
        }
        guard !username.isEmpty else { throw Self.invalid("names no user (postgres://user@host/database)") }
        let (host, port) = try Self.hostAndPort(authority[authority.index(after: at)...])
        var socketDirectory: String?
        var tlsMode = PostgresSettings.TLSMode.disable
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = String(parts[0])
            let value = try Self.decode(parts.count > 1 ? parts[1] : "", key)
            switch key {
            case "sslmode":
                guard let mode = PostgresSettings.TLSMode(rawValue: value) else {
                    throw Self.invalid("has sslmode=\(value); use disable, require or verify-full")
                }
                tlsMode = mode
            case "host":
                guard value.hasPrefix("/") else { throw Self.invalid("has host=\(value); only a socket directory (/…) may be given there") }
                socketDirectory = value
            default:
                throw Self.invalid("has an unknown parameter \(key); known: sslmode, host")
            }
        }
        self.tlsMode = tlsMode
        if let socketDirectory {
            endpoint = .socket(directory: socketDirectory, port: port)
        } else {
            guard !host.isEmpty else { throw Self.invalid("names no host (postgres://user@host/database, or ?host=/socket/dir)") }
            endpoint = .tcp(host: host, port: port)
        }
    }

    private static func hostAndPort(_ text: Substring) throws -> (String, Int) {
        var host = text
        var portText: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw invalid("has an IPv6 host without its closing ]") }
            let after = host[host.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("has text after the IPv6 host") }
                portText = after.dropFirst()
            }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            portText = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        guard let portText else { return (String(host), 5432) }
        guard let port = Int(portText), (1...65535).contains(port) else { throw invalid("has port \(portText); use 1 to 65535") }
        return (String(host), port)
    }

    private static func decode(_ text: Substring, _ part: String) throws -> String {
        guard let decoded = String(text).removingPercentEncoding else { throw invalid("has a bad %-escape in its \(part)") }
        return decoded
    }

    /// The URL itself is left out of the message: it may hold a password.
    private static func invalid(_ problem: String) -> PostgresStoreError {
        PostgresStoreError(code: .invalidSettings, message: "the [store] url \(problem)")
    }
}
