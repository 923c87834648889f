import Foundation
import RelayCore

/// `relay.json` in the data directory: which configuration file the relay serving it (or the last
/// one) started from, so operator tools that answer "what would the relay do" (which backend
/// answers a conversation) read the same file without being told (`--config`).
public enum ServedConfig {
    static let fileName = "relay.json"

    /// Records `config`'s file (an absolute path; null for the embedded default).
    static func record(_ config: RelayConfig) throws {
        let source = config.sourcePath.map { path in
            path.hasPrefix("/") ? path : (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(path)
        }
        let json = JSONValue.object(["config": source.map { .string(($0 as NSString).standardizingPath) } ?? .null]).encoded()
        let path = (config.dataDirectory as NSString).appendingPathComponent(fileName)
        try Data(json.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        chmod(path, 0o600)
    }

    /// What a relay recorded: the file it started from, nil for the embedded default.
    public struct Record: Sendable {
        public let file: String?
    }

    /// What the relay of `dataDirectory` recorded; nil when no relay has (an older one, or none).
    public static func record(inDataDirectory dataDirectory: String) -> Record? {
        let path = (dataDirectory as NSString).appendingPathComponent(fileName)
        guard let data = FileManager.default.contents(atPath: path), case .object(let fields)? = JSONValue.parse(Array(data)) else { return nil }
        return Record(file: fields["config"]?.stringValue)
    }
}
