import Foundation

/// An upload's file under a node's data directory, read and written off the cooperative pool
/// (a file of many megabytes must not stall the tasks beside it).
enum AssetFiles {
    /// The file's bytes.
    static func read(_ path: String) async throws -> Data {
        try await offPool { try Data(contentsOf: URL(fileURLWithPath: path)) }
    }

    /// Writes `bytes` to `path` (0600) whole or not at all: another reader of the folder never
    /// sees half a file.
    static func write(_ bytes: Data, to path: String) async throws {
        try await offPool {
            let folder = (path as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let partial = (folder as NSString).appendingPathComponent(".shared-\(UUID().uuidString)")
            guard FileManager.default.createFile(atPath: partial, contents: bytes, attributes: [.posixPermissions: 0o600]) else {
                throw PostgresStoreError(code: .rejected, message: "cannot write the shared upload to \(folder)")
            }
            guard rename(partial, path) == 0 else {
                let reason = String(cString: strerror(errno))
                try? FileManager.default.removeItem(atPath: partial)
                throw PostgresStoreError(code: .rejected, message: "cannot move the shared upload into \(folder): \(reason)")
            }
        }
    }

    private static func offPool<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
        }
    }
}
