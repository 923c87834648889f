import Foundation
import RelayStore

/// The HS256 key for Clawline tokens: 32 random bytes in `jwt.key` (0600) under the data directory.
enum SigningKey {
    static func loadOrCreate(in dataDirectory: String) throws -> [UInt8] {
        let path = (dataDirectory as NSString).appendingPathComponent("jwt.key")
        if let data = FileManager.default.contents(atPath: path), data.count >= 32 { return Array(data) }
        var key = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in key.indices { key[index] = generator.next() }
        guard FileManager.default.createFile(atPath: path, contents: Data(key), attributes: [.posixPermissions: 0o600]) else {
            throw StoreError("cannot write the signing key \(path)")
        }
        return key
    }
}
