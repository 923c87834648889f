import Foundation
import RelayCore

/// A turn's attachments as files for a program: a private directory (0700, files 0600) named by
/// the turn, each file `<n>-<name>` with the client's name reduced to a safe last path component.
struct TurnFiles: Sendable {
    let directory: String
    private let attachments: [TurnAttachment]
    /// The most bytes one attachment may have to be written.
    static let maxBytes = 64 << 20

    init?(_ attachments: [TurnAttachment], runID: String) {
        guard !attachments.isEmpty else { return nil }
        let safeRun = String(runID.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) || $0 == "-" }.prefix(64))
        directory = NSTemporaryDirectory() + "clawrelay-attachments-\(safeRun)-\(UUID().uuidString)"
        self.attachments = attachments
    }

    /// `<n>-<name>`: the name's last path component, without leading dots or control characters,
    /// at most 100 characters; `attachment` when nothing is left.
    static func fileName(_ name: String?, index: Int) -> String {
        let last = (name ?? "").split(separator: "/").last.map(String.init) ?? ""
        var cleaned = String(last.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) && $0 != "\\" }.prefix(100))
        while cleaned.hasPrefix(".") { cleaned.removeFirst() }
        return "\(index)-\(cleaned.isEmpty ? "attachment" : cleaned)"
    }

    /// Writes every attachment; returns what went wrong with the first that could not be written.
    func write() -> String? {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            return "\(error)"
        }
        for (index, attachment) in attachments.enumerated() {
            let path = directory + "/" + Self.fileName(attachment.fileName, index: index + 1)
            guard let data = attachment.bytes(limit: Self.maxBytes) else { return "attachment \(index + 1) could not be read" }
            guard FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: 0o600]) else {
                return "\(path) could not be written"
            }
        }
        return nil
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
