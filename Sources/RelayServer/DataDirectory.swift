import Foundation
import Logging

/// Why the relay could not start, as a sentence for the operator.
struct StartupFailure: Error, CustomStringConvertible {
    let description: String
}

/// The relay's data directory: private to its user, and served by one relay at a time.
public struct DataDirectory {
    let path: String

    public init(path: String) { self.path = path }

    /// Creates the folder (0700), takes the lock (a second relay on the same folder is refused with
    /// the first one's PID) and tightens what an older run left readable by others.
    func open(logger: Logger) throws {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue {
            throw StartupFailure(description: "the data directory \(path) is a file; point data_dir (or --data-dir) at a folder")
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StartupFailure(description: "cannot create the data directory \(path): \(Self.reason(error))")
        }
        guard access(path, W_OK) == 0 else {
            throw StartupFailure(
                description: "the data directory \(path) is not writable by this user (uid \(getuid())); fix its owner or permissions"
            )
        }
        try lock()
        let tightened = tighten()
        if tightened > 0 {
            logger.notice("made the data directory private (0700 folders, 0600 files)", metadata: ["path": "\(path)", "changed": "\(tightened)"])
        }
    }

    /// Refuses a folder another relay serves, writing nothing (not even the lock file): start-up
    /// asks this before it creates, tightens or opens anything.
    func refuseIfServed() throws {
        let fd = Foundation.open(lockFile, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { throw served(byPIDIn: fd) }
        flock(fd, LOCK_UN)
    }

    private var lockFile: String { (path as NSString).appendingPathComponent("relay.lock") }

    /// "another relay (pid N) is serving …", the PID read from the lock file `fd`.
    private func served(byPIDIn fd: Int32) -> StartupFailure {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(fd, &buffer, buffer.count, 0)
        let pid = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return StartupFailure(
            description: "another relay (pid \(pid.isEmpty ? "unknown" : pid)) is serving \(path); stop it first or use another data_dir"
        )
    }

    /// Removes group and other access from the folder and everything in it; returns how many changed.
    private func tighten() -> Int {
        var changed = 0
        let items = [""] + ((FileManager.default.enumerator(atPath: path)?.allObjects as? [String]) ?? [])
        for item in items {
            let full = item.isEmpty ? path : (path as NSString).appendingPathComponent(item)
            var info = stat()
            guard lstat(full, &info) == 0, (info.st_mode & S_IFMT) != S_IFLNK, info.st_mode & 0o077 != 0 else { continue }
            if chmod(full, info.st_mode & 0o700) == 0 { changed += 1 }
        }
        return changed
    }

    /// Locks `relay.lock` and writes the PID into it. The descriptor is never closed: the lock
    /// lasts as long as the process, and the kernel drops it at exit. `clawrelay migrate` holds
    /// it too, so no relay starts on the folder while it copies.
    public func lock() throws {
        let fd = Foundation.open(lockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StartupFailure(description: "cannot open \(lockFile): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let failure = served(byPIDIn: fd)
            close(fd)
            throw failure
        }
        let text = "\(getpid())\n"
        ftruncate(fd, 0)
        _ = text.withCString { write(fd, $0, strlen($0)) }
    }

    static func reason(_ error: Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return nsError.localizedFailureReason ?? nsError.localizedDescription
    }
}
