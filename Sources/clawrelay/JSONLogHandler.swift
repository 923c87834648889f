import Foundation
import Logging

/// One JSON object per line on stderr (`[server] log_format = "json"`), for log shippers:
/// `ts` (RFC 3339 UTC with milliseconds), `level`, `msg`, `label`, then the metadata as strings.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields: [String: String] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { fields[key] = "\(value)" }
        fields["ts"] = Self.timestamp()
        fields["level"] = event.level.rawValue
        fields["msg"] = event.message.description
        fields["label"] = label
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var data = try? encoder.encode(fields) else { return }
        data.append(0x0A)
        FileHandle.standardError.write(data)
    }

    private static func timestamp() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date())
    }
}
