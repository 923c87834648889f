import Foundation
import Logging
import Synchronization

/// What a DiscoClaw upstream account keeps between runs in `accounts/<name>.discoclaw.json`: the
/// device it registered as (with a setup token) and the upstream conversation each relay
/// conversation continues. The file holds a bearer token: 0600 in a 0700 directory, replaced
/// atomically so a crash leaves the old file or the new one, never half of one.
struct DiscoClawAccountFile: Codable, Equatable, Sendable {
    static let currentVersion = 1

    var version = currentVersion
    /// The server this state belongs to (its base URL); another server's state is not reused.
    var server: String
    var deviceId: String?
    var userId: String?
    var token: String?
    /// Relay conversation id → upstream conversation id.
    var conversations: [String: String] = [:]

    init(server: String) { self.server = server }

    static func path(directory: String, account: String) -> String {
        let safe = String(account.unicodeScalars.map { Self.fileNameScalars.contains($0) ? Character($0) : "_" })
        return (directory as NSString).appendingPathComponent("\(safe).discoclaw.json")
    }

    private static let fileNameScalars = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.".unicodeScalars)

    /// The state kept for `server`, or a fresh one (with why, when a file was there but not used).
    static func load(path: String, server: String) -> (file: DiscoClawAccountFile, note: String?) {
        guard let data = FileManager.default.contents(atPath: path) else { return (DiscoClawAccountFile(server: server), nil) }
        guard let stored = try? JSONDecoder().decode(DiscoClawAccountFile.self, from: data), stored.version == currentVersion else {
            return (DiscoClawAccountFile(server: server), "\(path) is not a state file this version reads; starting afresh")
        }
        guard stored.server == server else {
            return (DiscoClawAccountFile(server: server), "\(path) belongs to another server; registering and mapping afresh")
        }
        return (stored, nil)
    }

    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data()
    }

    /// Writes `data` to `path` atomically with mode 0600 (a temporary file beside it, fsync, rename),
    /// creating the directory 0700.
    static func write(_ data: Data, to path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = "\(path).\(getpid()).tmp"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw AccountFileError("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        let written = data.withUnsafeBytes { bytes in bytes.isEmpty ? 0 : Foundation.write(fd, bytes.baseAddress, bytes.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == data.count, synced, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw AccountFileError("cannot write \(path): \(reason)")
        }
    }
}

struct AccountFileError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Saves an account's state off the loop, in order; a save asked for while one runs is folded
/// into the next write (the latest state wins).
final class DiscoClawAccountWriter: Sendable {
    private let path: String
    private let logger: Logger
    private let queue = DispatchQueue(label: "clawrelay.discoclaw-account")
    private let latest = Mutex<Data?>(nil)

    init(path: String, logger: Logger) {
        self.path = path
        self.logger = logger
    }

    func save(_ file: DiscoClawAccountFile) {
        let wasIdle = latest.withLock { pending in
            defer { pending = file.encoded() }
            return pending == nil
        }
        guard wasIdle else { return }
        queue.async { [self] in
            let taken = latest.withLock { pending -> Data? in
                defer { pending = nil }
                return pending
            }
            guard let data = taken else { return }
            do {
                try DiscoClawAccountFile.write(data, to: path)
            } catch {
                logger.error("could not save the DiscoClaw account state", metadata: ["path": "\(path)", "error": "\(error)"])
            }
        }
    }

    /// Waits for the writes asked for so far (start-up registration, tests).
    func flush() { queue.sync {} }
}
