import Foundation
import RelayStore

/// The HS256 key for Clawline tokens: 32 random bytes. A relay on its own keeps it in `jwt.key`
/// (0600) under the data directory; the nodes of a cluster share one in their database
/// (`RelayStorage.clawlineSigningKey`), so a token any node signed works on every node.
enum SigningKey {
    static func loadOrCreate(in dataDirectory: String) throws -> [UInt8] {
        if let key = stored(in: dataDirectory) { return key }
        let key = random()
        let path = self.path(in: dataDirectory)
        guard FileManager.default.createFile(atPath: path, contents: Data(key), attributes: [.posixPermissions: 0o600]) else {
            throw StoreError("cannot write the signing key \(path)")
        }
        return key
    }

    /// The key in the data directory, if it holds one.
    static func stored(in dataDirectory: String) -> [UInt8]? {
        guard let data = FileManager.default.contents(atPath: path(in: dataDirectory)), data.count >= 32 else { return nil }
        return Array(data)
    }

    static func random() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    private static func path(in dataDirectory: String) -> String { (dataDirectory as NSString).appendingPathComponent("jwt.key") }
}
