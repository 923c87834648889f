import Foundation
import RelayCore

/// The shared secret of the `[companion]` listener when the config names none: 32 random bytes
/// as hex in `<data_dir>/companion.token`, readable by the relay's user only.
public enum CompanionToken {
    public static func path(in dataDirectory: String) -> String { (dataDirectory as NSString).appendingPathComponent("companion.token") }

    /// The stored token, nil when there is none yet.
    public static func load(in dataDirectory: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path(in: dataDirectory)) else { return nil }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return token.isEmpty ? nil : token
    }

    public static func loadOrCreate(in dataDirectory: String) throws -> String {
        if let token = load(in: dataDirectory) { return token }
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let token = bytes.map { String(format: "%02x", $0) }.joined()
        guard
            FileManager.default.createFile(
                atPath: path(in: dataDirectory),
                contents: Data((token + "\n").utf8),
                attributes: [.posixPermissions: 0o600]
            )
        else {
            throw CompanionTokenError(path: path(in: dataDirectory))
        }
        return token
    }
}

public struct CompanionTokenError: Error, CustomStringConvertible {
    public let path: String
    public var description: String { "cannot write the Companion token to \(path): check that the data directory is writable" }
}
