import Foundation
import RelayStore

/// Why a backup did not happen, as a sentence for the operator.
public struct BackupFailure: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(description: String) { self.description = description }
}

/// A copy of a data directory that a relay can start on, made while the relay runs (`clawrelay
/// backup`).
///
/// Every SQLite database (`*.sqlite`: `relay.sqlite`, `audit.sqlite`) is copied first through
/// SQLite's online backup API (one snapshot each), then every other file (keys, tokens, upstream
/// account files, assets, Companion projects), so an asset or account file the copied store
/// names is there. Left out: what describes the running process only (`relay.lock`,
/// `listeners.json`, `relay.json`), the databases' logs (`-wal`, `-shm`, `-journal`: the copies
/// need none) and files still being written (`.upload-*`, `*.tmp`). The copy is built in
/// `DEST.partial` and renamed to `DEST` once complete; on any failure nothing is left behind.
/// Folders are 0700, files 0600 (0700 when the owner could run them).
public struct DataBackup {
    /// What the copy is at, for progress reports.
    public struct Progress: Sendable {
        public var copiedBytes: Int64
        public var totalBytes: Int64
        public var file: String
    }

    /// What was copied.
    public struct Summary: Sendable {
        public var files = 0
        public var bytes: Int64 = 0
        public var skipped: [String] = []
    }

    static let processFiles: Set<String> = ["relay.lock", "listeners.json", "relay.json"]
    static let logSuffixes = ["-wal", "-shm", "-journal"]

    let source: String
    let destination: String
    var partial: String { destination + ".partial" }

    /// `source` is an existing data directory; `destination` a path that does not exist yet.
    public init(source: String, destination: String) throws(BackupFailure) {
        let source = Self.absolute(source)
        let destination = Self.absolute(destination)
        guard destination != source, !destination.hasPrefix(source + "/") else {
            throw BackupFailure(description: "\(destination) is inside the data directory \(source); back up to a folder outside it")
        }
        self.source = source
        self.destination = destination
    }

    /// Makes the copy; `progress` hears about it as it goes and may throw to stop it.
    public func run(progress: @escaping (Progress) throws -> Void = { _ in }) throws(BackupFailure) -> Summary {
        try checkDestination()
        let plan = try self.plan()
        do {
            try FileManager.default.createDirectory(atPath: partial, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            throw BackupFailure(description: "cannot create \(partial): \(Self.reason(error))")
        }
        do {
            var copy = Copier(source: source, target: partial, total: plan.bytes, progress: progress)
            for item in plan.items { try copy.copy(item) }
            try copy.finish()
            guard rename(partial, destination) == 0 else {
                throw BackupFailure(description: "cannot rename \(partial) to \(destination): \(Self.errno())")
            }
            Copier.sync(directory: (destination as NSString).deletingLastPathComponent)
            return Summary(files: copy.files, bytes: copy.copied, skipped: plan.skipped)
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            if let failure = error as? BackupFailure { throw failure }
            throw BackupFailure(description: "\(error)")
        }
    }

    private func checkDestination() throws(BackupFailure) {
        for path in [destination, partial]
        where FileManager.default.fileExists(atPath: path) || (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil {
            let hint = path == partial ? " (left by an interrupted backup?); remove it" : "; back up to a new folder"
            throw BackupFailure(description: "\(path) already exists\(hint)")
        }
        let parent = (destination as NSString).deletingLastPathComponent
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: parent, isDirectory: &isFolder), isFolder.boolValue else {
            throw BackupFailure(description: "\(parent) is not a folder; create it first")
        }
    }

    /// Every item under the data directory, databases first, with what is left out and why.
    private func plan() throws(BackupFailure) -> (items: [Copier.Item], bytes: Int64, skipped: [String]) {
        guard let names = FileManager.default.enumerator(atPath: source)?.allObjects as? [String] else {
            throw BackupFailure(description: "cannot read the data directory \(source)")
        }
        var databases: [Copier.Item] = []
        var others: [Copier.Item] = []
        var skipped: [String] = []
        var bytes: Int64 = 0
        var links: [String] = []
        for name in names.sorted() {
            // What lies behind a link is the link's target's, not the data directory's.
            if links.contains(where: { name.hasPrefix($0 + "/") }) { continue }
            var info = stat()
            guard lstat((source as NSString).appendingPathComponent(name), &info) == 0 else { continue }
            let base = (name as NSString).lastPathComponent
            let kind = info.st_mode & S_IFMT
            if kind == S_IFREG, Self.isLeftOut(name, base: base) { continue }
            switch kind {
            case S_IFDIR: others.append(.folder(name))
            case S_IFLNK:
                links.append(name)
                others.append(.link(name))
            case S_IFREG where base.hasSuffix(".sqlite"):
                databases.append(.database(name))
                bytes += Int64(info.st_size)
            case S_IFREG:
                others.append(.file(name, executable: info.st_mode & 0o100 != 0))
                bytes += Int64(info.st_size)
            default: skipped.append("\(name) (not a file, folder or link)")
            }
        }
        return (databases + others, bytes, skipped)
    }

    /// What the running process owns or is still writing.
    static func isLeftOut(_ name: String, base: String) -> Bool {
        if !name.contains("/"), processFiles.contains(name) { return true }
        if logSuffixes.contains(where: { base.hasSuffix(".sqlite" + $0) }) { return true }
        return base.hasPrefix(".upload-") || base.hasSuffix(".tmp")
    }

    static func absolute(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(path)
        return (full as NSString).standardizingPath
    }

    static func reason(_ error: any Error) -> String { DataDirectory.reason(error) }

    static func errno() -> String { String(cString: strerror(Glibc.errno)) }
}
