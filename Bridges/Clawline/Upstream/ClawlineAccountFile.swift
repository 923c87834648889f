import Dispatch
import Foundation
import Logging
import RelayCore
import Synchronization

/// The account file of an upstream Clawline account: `<accounts>/<account>.clawline.json`, 0600
/// in a 0700 folder, holding its `Contents`. Read once at start-up; written on a private queue,
/// atomically (a 0600 temporary file renamed over it), with cursor moves coalesced into one write
/// a second.
///
/// - Important: any thread. The token is never logged.
final class ClawlineAccountFile: Sendable {
    /// What the account keeps between runs: its device id (made once, before the first
    /// `pair_request`), the token and user id the provider issued, and the replay cursor.
    struct Contents: Codable, Equatable, Sendable {
        var deviceId: String
        var token: String?
        var userId: String?
        /// The last stored server event (`s_…`) the account has seen: `auth`'s `lastMessageId`.
        var lastMessageId: String?

        var isPaired: Bool { token?.isEmpty == false }
    }

    private struct State {
        var contents: Contents
        var flushScheduled = false
    }

    let path: String
    private let state: Mutex<State>
    private let queue: DispatchQueue
    private let logger: Logger
    /// How long cursor moves gather before they are written.
    static let cursorDelayMillis = 1_000

    /// Loads the account's file, or creates it with a new device id.
    init(directory: String, account: String, logger: Logger) throws(ClawlineAccountFileError) {
        if let problem = AccountFileName.problem(with: account) {
            throw ClawlineAccountFileError(
                description: "the account name \(String(reflecting: account)) cannot name a file in \(directory): it \(problem)"
            )
        }
        path = (directory as NSString).appendingPathComponent("\(account).clawline.json")
        self.logger = logger
        queue = DispatchQueue(label: "clawrelay.clawline-account.\(account)")
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw ClawlineAccountFileError(description: "cannot create \(directory): \(error.localizedDescription)")
        }
        if let data = FileManager.default.contents(atPath: path) {
            guard let loaded = try? JSONDecoder().decode(Contents.self, from: data), Identifiers.isUUIDv4(loaded.deviceId) else {
                throw ClawlineAccountFileError(
                    description: "\(path) is not an account file (JSON with a UUIDv4 deviceId); fix it, or delete it to pair again"
                )
            }
            state = Mutex(State(contents: loaded))
        } else {
            let fresh = Contents(deviceId: Identifiers.newUUID())
            try Self.write(fresh, to: path)
            state = Mutex(State(contents: fresh))
        }
    }

    var contents: Contents { state.withLock { $0.contents } }

    /// Keeps what `pair_result` issued; written at once (the provider hands a token out only so often).
    func storePairing(token: String, userID: String) {
        state.withLock {
            $0.contents.token = token
            $0.contents.userId = userID
            $0.contents.lastMessageId = nil
        }
        queue.async { [self] in writeNow() }
    }

    /// Moves the replay cursor; the file follows within `cursorDelayMillis`.
    func advanceCursor(to id: String) {
        let schedule = state.withLock { state -> Bool in
            guard state.contents.lastMessageId != id else { return false }
            state.contents.lastMessageId = id
            defer { state.flushScheduled = true }
            return !state.flushScheduled
        }
        guard schedule else { return }
        queue.asyncAfter(deadline: .now() + .milliseconds(Self.cursorDelayMillis)) { [self] in
            state.withLock { $0.flushScheduled = false }
            writeNow()
        }
    }

    /// Waits until everything changed so far is on disk.
    func flush() {
        queue.sync { writeNow() }
    }

    private func writeNow() {
        do {
            try Self.write(contents, to: path)
        } catch {
            logger.error("cannot write the account file", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }

    /// Writes `contents` to `path` through a 0600 temporary file renamed over it.
    static func write(_ contents: Contents, to path: String) throws(ClawlineAccountFileError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        guard let data = try? encoder.encode(contents) else { throw ClawlineAccountFileError(description: "cannot encode \(path)") }
        let bytes = Array(data) + [0x0A]
        let temporary = path + ".tmp"
        let fd = Foundation.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ClawlineAccountFileError(description: "cannot write \(temporary): \(String(cString: strerror(errno)))") }
        fchmod(fd, 0o600)
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress! + written, bytes.count - written) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                let reason = String(cString: strerror(errno))
                close(fd)
                throw ClawlineAccountFileError(description: "cannot write \(temporary): \(reason)")
            }
            written += count
        }
        fsync(fd)
        close(fd)
        guard rename(temporary, path) == 0 else {
            throw ClawlineAccountFileError(description: "cannot rename \(temporary) to \(path): \(String(cString: strerror(errno)))")
        }
    }
}

/// Why an account file could not be read or written.
struct ClawlineAccountFileError: Error, CustomStringConvertible {
    let description: String
}
