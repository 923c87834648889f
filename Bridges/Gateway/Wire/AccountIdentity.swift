import Crypto
import Foundation
import RelayKit

/// An operator identity's Ed25519 key and device token, kept in a private folder (0600 files):
/// an upstream account's under the data directory, `clawrelay chat`'s under ~/.config/clawrelay.
public struct AccountIdentity {
    let key: Curve25519.Signing.PrivateKey
    public let deviceID: String
    /// The raw Ed25519 public key, base64url.
    public let publicKey: String
    private let tokenPath: String

    /// Loads `<directory>/<account>.key`, creating it (and the folder, 0700) on first use.
    public init(directory: String, account: String) throws {
        if let problem = AccountFileName.problem(with: account) {
            throw AccountError("the account name \(String(reflecting: account)) cannot name a file in \(directory): it \(problem)")
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let keyPath = (directory as NSString).appendingPathComponent("\(account).key")
        tokenPath = (directory as NSString).appendingPathComponent("\(account).token")
        if let data = FileManager.default.contents(atPath: keyPath), let loaded = try? Curve25519.Signing.PrivateKey(rawRepresentation: data) {
            key = loaded
        } else {
            key = Curve25519.Signing.PrivateKey()
            guard FileManager.default.createFile(atPath: keyPath, contents: key.rawRepresentation, attributes: [.posixPermissions: 0o600]) else {
                throw AccountError("cannot write the account key \(keyPath)")
            }
        }
        let raw = Array(key.publicKey.rawRepresentation)
        deviceID = DeviceAuth.deviceID(forRawKey: raw)
        publicKey = Base64URL.encode(raw)
    }

    /// The device token the gateway issued; empty before pairing (setting "" drops the file).
    public var token: String {
        get { FileManager.default.contents(atPath: tokenPath).map { String(decoding: $0, as: UTF8.self) } ?? "" }
        nonmutating set {
            if newValue.isEmpty {
                try? FileManager.default.removeItem(atPath: tokenPath)
            } else {
                _ = FileManager.default.createFile(atPath: tokenPath, contents: Data(newValue.utf8), attributes: [.posixPermissions: 0o600])
            }
        }
    }

    public func sign(_ payload: String) -> String { DeviceAuth.sign(payload, with: key) }
}

public struct AccountError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
