import Foundation
import RelayServer
import Testing

/// The checks `serve`, a reload and `check-config` make over a decoded file, located by line.
@Suite struct ConfigCheckTests {
    private func problems(_ text: String) throws -> [String] {
        ConfigCheck.problems(in: try RelayConfig.parse(text: text, fileName: "relay.toml")).map(\.description)
    }

    @Test func aBackendWhoseProgramCannotRunIsNamedAtItsCommandLine() throws {
        let text = """
            [[backends]]
            name = "echo"
            kind = "echo"

            [[backends]]
            name = "tool"
            kind = "command"
            command = ["/no/such/program", "-x"]
            [[backends]]
            name = "fine"
            kind = "command"
            command = ["sh"]
            """
        #expect(
            try problems(text) == [
                #"relay.toml:8: [[backends]] command: backend "tool": the program /no/such/program is missing or not executable (a bare name is looked up in PATH)"#
            ]
        )
    }

    @Test func swappedTLSFilesAreBothNamed() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = folder.appendingPathComponent("key.pem").path
        let certificate = folder.appendingPathComponent("cert.pem").path
        try "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".write(toFile: key, atomically: true, encoding: .utf8)
        try "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".write(toFile: certificate, atomically: true, encoding: .utf8)
        let found = try problems("[clawline]\ntls_cert = \"\(key)\"\ntls_key = \"\(certificate)\"\n")
        #expect(found.count == 2)
        #expect(found.first?.hasPrefix("relay.toml:2: [clawline] tls_cert: \(key) holds no PEM certificate") == true)
        #expect(found.last?.hasPrefix("relay.toml:3: [clawline] tls_key: \(certificate) holds no PEM private key") == true)
    }
}
