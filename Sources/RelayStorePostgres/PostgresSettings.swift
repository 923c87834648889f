import Foundation
import PostgresNIO

/// How to reach the relay's PostgreSQL database: `[store] url`, `password_file`, `pool_size`.
///
/// The URL is `postgres://user[:password]@host[:port]/database?sslmode=…`; `?host=/dir` connects
/// through the Unix socket in that directory instead of TCP. The password comes from the URL, else
/// from `password_file` (its first line; the file must not be readable by group or others), else
/// from `PGPASSWORD` (handed in by the caller: nothing here reads the environment).
public struct PostgresSettings: Sendable, CustomStringConvertible {
    /// `sslmode`: plain TCP unless asked.
    public enum TLSMode: String, Sendable, CaseIterable {
        case disable
        /// Encrypted, the server's certificate is not checked.
        case require
        /// Encrypted, the certificate must chain to a trusted root and name the host.
        case verifyFull = "verify-full"
    }

    /// Where the server listens.
    public enum Endpoint: Sendable, Equatable {
        case tcp(host: String, port: Int)
        /// The directory holding `.s.PGSQL.<port>`.
        case socket(directory: String, port: Int)
    }

    /// Where the password came from (never the password itself).
    public enum PasswordSource: String, Sendable {
        case none, url, file, environment
    }

    public var username: String
    public var database: String
    public var endpoint: Endpoint
    public var tlsMode: TLSMode
    /// Connections of the reader pool, 1…64.
    public var poolSize: Int
    public private(set) var passwordSource: PasswordSource
    /// Kept out of `description` and of every log line.
    var password: String?

    public static let poolSizes = 1...64

    public init(url: String, passwordFile: String? = nil, environmentPassword: String? = nil, poolSize: Int = 4) throws {
        let parsed = try PostgresURL(url)
        guard Self.poolSizes.contains(poolSize) else {
            throw PostgresStoreError(code: .invalidSettings, message: "pool_size must be between 1 and 64, not \(poolSize)")
        }
        username = parsed.username
        database = parsed.database
        endpoint = parsed.endpoint
        tlsMode = parsed.tlsMode
        self.poolSize = poolSize
        if let password = parsed.password {
            (self.password, passwordSource) = (password, .url)
        } else if let passwordFile {
            (self.password, passwordSource) = (try Self.readPasswordFile(passwordFile), .file)
        } else if let environmentPassword, !environmentPassword.isEmpty {
            (self.password, passwordSource) = (environmentPassword, .environment)
        } else {
            (password, passwordSource) = (nil, .none)
        }
        if tlsMode != .disable, case .socket = endpoint {
            throw PostgresStoreError(code: .invalidSettings, message: "sslmode=\(tlsMode.rawValue) needs a TCP host, not a Unix socket (host=/…)")
        }
    }

    /// The URL without its password, the pool size and where the password came from.
    public var description: String {
        let place =
            switch endpoint {
            case .tcp(let host, let port): "\(host.contains(":") ? "[\(host)]" : host):\(port)"
            case .socket(let directory, let port): ":\(port)?host=\(directory)"
            }
        return "postgres://\(username)@\(place)/\(database) sslmode=\(tlsMode.rawValue) pool_size=\(poolSize) password=\(passwordSource.rawValue)"
    }

    /// postgres-nio's configuration for one connection, named `clawrelay:<role>` on the server
    /// (`application_name`, so the sweeper and an operator can tell the relay's sessions apart).
    public func configuration(applicationName: String) throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        switch endpoint {
        case .tcp(let host, let port):
            configuration = .init(host: host, port: port, username: username, password: password, database: database, tls: try tls())
        case .socket(let directory, let port):
            let path = (directory.hasSuffix("/") ? directory : directory + "/") + ".s.PGSQL.\(port)"
            configuration = .init(unixSocketPath: path, username: username, password: password, database: database)
        }
        configuration.options.additionalStartupParameters = [("application_name", applicationName)]
        return configuration
    }

    private func tls() throws -> PostgresConnection.Configuration.TLS {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch tlsMode {
        case .disable: return .disable
        case .require: tls.certificateVerification = .none
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        do {
            return .require(try NIOSSLContext(configuration: tls))
        } catch {
            throw PostgresStoreError(code: .invalidSettings, message: "sslmode=\(tlsMode.rawValue): cannot set up TLS: \(error)")
        }
    }

    /// The first line of `path`, refused when group or others may read the file.
    static func readPasswordFile(_ path: String) throws -> String {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw PostgresStoreError(code: .invalidSettings, message: "password_file \(path) cannot be read: \(error.localizedDescription)")
        }
        let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0o777
        guard mode & 0o077 == 0 else {
            throw PostgresStoreError(
                code: .invalidSettings,
                message: "password_file \(path) is readable by group or others (mode \(String(mode, radix: 8))); run chmod 600 on it"
            )
        }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw PostgresStoreError(code: .invalidSettings, message: "password_file \(path) cannot be read as UTF-8 text")
        }
        let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let password = line.hasSuffix("\r") ? String(line.dropLast()) : line
        guard !password.isEmpty else { throw PostgresStoreError(code: .invalidSettings, message: "password_file \(path) is empty") }
        return password
    }
}
