import Foundation
import RelayServer
import Testing

/// The error `text` is rejected with, or nil when it parses.
func rejection(_ text: String) -> ConfigError? {
    do {
        _ = try RelayConfig.parse(text: text, fileName: "relay.toml")
        return nil
    } catch {
        return error
    }
}

func expectRejection(
    _ text: String,
    _ code: ConfigError.Code,
    _ description: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard let error = rejection(text) else {
        Issue.record("accepted: \(text)", sourceLocation: sourceLocation)
        return
    }
    #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    #expect(error.description.hasPrefix(description), "\(error)", sourceLocation: sourceLocation)
}

let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
