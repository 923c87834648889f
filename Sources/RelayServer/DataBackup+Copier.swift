import Foundation
import RelayStore

extension DataBackup {
    /// Copies the planned items from the data directory into the partial backup, counting bytes.
    struct Copier {
        enum Item {
            case folder(String)
            case link(String)
            case file(String, executable: Bool)
            case database(String)
        }

        static let chunkBytes = 1 << 20

        let source: String
        let target: String
        let total: Int64
        let progress: (Progress) throws -> Void
        private(set) var copied: Int64 = 0
        private(set) var files = 0
        private var folders: [String] = []

        init(source: String, target: String, total: Int64, progress: @escaping (Progress) throws -> Void) {
            self.source = source
            self.target = target
            self.total = total
            self.progress = progress
        }

        mutating func copy(_ item: Item) throws {
            switch item {
            case .folder(let name):
                let path = (target as NSString).appendingPathComponent(name)
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                folders.append(path)
            case .link(let name):
                let destination = try FileManager.default.destinationOfSymbolicLink(atPath: (source as NSString).appendingPathComponent(name))
                try FileManager.default.createSymbolicLink(
                    atPath: (target as NSString).appendingPathComponent(name),
                    withDestinationPath: destination
                )
            case .file(let name, let executable):
                try copyFile(name, mode: executable ? 0o700 : 0o600)
                files += 1
            case .database(let name):
                let from = (source as NSString).appendingPathComponent(name)
                let start = copied
                let size = Int64((try? FileManager.default.attributesOfItem(atPath: from)[.size] as? Int) ?? 0)
                try DatabaseCopy.copy(from: from, to: (target as NSString).appendingPathComponent(name)) { done, pages in
                    // Pages stand for the file's bytes (the copy may be smaller than a file with free pages).
                    try progress(Progress(copiedBytes: start + (pages == 0 ? 0 : size * Int64(done) / Int64(pages)), totalBytes: total, file: name))
                }
                copied = start + size
                files += 1
            }
        }

        /// Every folder's entries on disk before the rename publishes the backup.
        func finish() throws {
            for folder in folders.reversed() + [target] { Self.sync(directory: folder) }
        }

        private mutating func copyFile(_ name: String, mode: mode_t) throws {
            let from = (source as NSString).appendingPathComponent(name)
            let to = (target as NSString).appendingPathComponent(name)
            guard let input = FileHandle(forReadingAtPath: from) else { throw BackupFailure(description: "cannot read \(from)") }
            defer { try? input.close() }
            guard FileManager.default.createFile(atPath: to, contents: nil, attributes: [.posixPermissions: mode]),
                let output = FileHandle(forWritingAtPath: to)
            else { throw BackupFailure(description: "cannot create \(to): \(DataBackup.errno())") }
            defer { try? output.close() }
            while let chunk = try input.read(upToCount: Self.chunkBytes), !chunk.isEmpty {
                try output.write(contentsOf: chunk)
                copied += Int64(chunk.count)
                try progress(Progress(copiedBytes: copied, totalBytes: total, file: name))
            }
            try output.synchronize()
            chmod(to, mode)
        }

        static func sync(directory: String) {
            let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { return }
            fsync(fd)
            close(fd)
        }
    }
}
