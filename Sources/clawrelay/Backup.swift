import ArgumentParser
import Foundation
import RelayServer
import Synchronization

/// Set by SIGINT or SIGTERM: the backup stops at its next step and removes what it wrote.
private let backupInterrupted = Atomic<Bool>(false)

/// `clawrelay backup DEST`: a consistent copy of the data directory, made while the relay runs.
struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the data directory while the relay runs (restore: stop the relay, put the copy in place of the data directory, start it)."
    )
    @OptionGroup var options: DataOptions
    @Argument(help: "A folder that does not exist yet (built as DEST.partial, renamed when complete).") var destination: String

    /// Copies smaller than this report nothing until they are done.
    static let reportedBytes: Int64 = 8 << 20

    func run() throws {
        let config = options.loadExisting()
        let backup: DataBackup
        do {
            backup = try DataBackup(source: config.dataDirectory, destination: destination)
        } catch {
            fail("\(error)")
        }
        for stop in [SIGINT, SIGTERM] { signal(stop) { _ in backupInterrupted.store(true, ordering: .relaxed) } }
        let reporter = ProgressReporter()
        let summary: DataBackup.Summary
        do {
            summary = try backup.run { progress in
                if backupInterrupted.load(ordering: .relaxed) { throw BackupFailure(description: "interrupted") }
                reporter.report(progress)
            }
        } catch {
            fail("backup failed: \(error); nothing was left at \(destination)")
        }
        for item in summary.skipped { FileHandle.standardError.write(Data("clawrelay: left out \(item)\n".utf8)) }
        print("backed up \(config.dataDirectory) to \(destination): \(summary.files) files, \(ProgressReporter.mebibytes(summary.bytes)) MiB")
    }

    /// Progress on stderr for large copies, a line every tenth.
    final class ProgressReporter {
        private var lastTenth: Int64 = -1

        func report(_ progress: DataBackup.Progress) {
            guard progress.totalBytes >= Backup.reportedBytes else { return }
            let tenth = min(10, progress.copiedBytes * 10 / progress.totalBytes)
            guard tenth > lastTenth else { return }
            lastTenth = tenth
            let line =
                "clawrelay: backup \(tenth * 10)% (\(Self.mebibytes(progress.copiedBytes)) of \(Self.mebibytes(progress.totalBytes)) MiB, \(progress.file))\n"
            FileHandle.standardError.write(Data(line.utf8))
        }

        static func mebibytes(_ bytes: Int64) -> String { String(format: "%.1f", Double(bytes) / 1_048_576) }
    }
}
