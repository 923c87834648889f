import Foundation
import Testing

@testable import RelayServer

/// The commands the log prints for the operator run as printed.
@Suite struct OperatorHintTests {
    static let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]

    @Test func theBinaryIsNamedByItsPathUnlessPATHFindsIt() throws {
        #expect(OperatorHint.prefix(dataDirectory: RelayConfig.defaultDataDirectory, environment: ["PATH": "/nonexistent"]) == Self.me)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hint-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let name = (Self.me as NSString).lastPathComponent
        try FileManager.default.createSymbolicLink(atPath: folder + "/" + name, withDestinationPath: Self.me)
        #expect(OperatorHint.prefix(dataDirectory: "./.clawrelay", environment: ["PATH": "/nonexistent:" + folder]) == name)
    }

    @Test func anotherDataDirectoryIsNamedAbsoluteAndQuotedWhenNeeded() {
        let env = ["PATH": ""]
        #expect(OperatorHint.prefix(dataDirectory: "/var/lib/clawrelay", environment: env) == "\(Self.me) --data-dir /var/lib/clawrelay")
        let cwd = FileManager.default.currentDirectoryPath
        #expect(OperatorHint.prefix(dataDirectory: "my data", environment: env) == "\(Self.me) --data-dir '\(cwd)/my data'")
        let prefix = OperatorHint.prefix(dataDirectory: "/srv/it's", environment: env)
        #expect(OperatorHint.command("devices approve abc", prefix: prefix) == "\(Self.me) devices approve abc --data-dir '/srv/it'\\''s'")
    }
}
