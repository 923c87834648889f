import Foundation
import Testing

@testable import RelayServer

/// The commands the log prints for the operator run as printed.
@Suite struct OperatorHintTests {
    static let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]

    @Test func theBinaryIsNamedByItsPathUnlessPATHFindsIt() throws {
        let cwd = FileManager.default.currentDirectoryPath
        #expect(
            OperatorHint(dataDirectory: RelayConfig.defaultDataDirectory, environment: ["PATH": "/nonexistent"]).prefix
                == "\(Self.me) --data-dir \(cwd)/.clawrelay"
        )
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hint-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let name = (Self.me as NSString).lastPathComponent
        try FileManager.default.createSymbolicLink(atPath: folder + "/" + name, withDestinationPath: Self.me)
        #expect(
            OperatorHint(dataDirectory: "./.clawrelay", environment: ["PATH": "/nonexistent:" + folder]).prefix
                == "\(name) --data-dir \(cwd)/.clawrelay"
        )
    }

    @Test func theDataDirectoryIsNamedAbsoluteAndQuotedWhenNeeded() {
        let env = ["PATH": ""]
        #expect(OperatorHint(dataDirectory: "/var/lib/clawrelay", environment: env).prefix == "\(Self.me) --data-dir /var/lib/clawrelay")
        let cwd = FileManager.default.currentDirectoryPath
        #expect(OperatorHint(dataDirectory: "my data", environment: env).prefix == "\(Self.me) --data-dir '\(cwd)/my data'")
        let hint = OperatorHint(dataDirectory: "/srv/it's", environment: env)
        #expect(hint.command("devices approve abc") == "\(Self.me) devices approve abc --data-dir '/srv/it'\\''s'")
    }
}
