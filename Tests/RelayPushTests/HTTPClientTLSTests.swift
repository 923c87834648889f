import Foundation
import Logging
import RelayPush
import Testing

/// TLS verification against a Python HTTPS server whose certificate a throwaway CA signed.
@Suite struct HTTPClientTLSTests {
    private let logger = Logger(label: "push-test")

    @Test func aPrivateCAIsTrustedOnlyWhenGivenAsCAFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("clawrelay-push-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await makeCertificates(in: directory)
        let server = try await PythonHTTPServer.start(
            certificate: directory.appendingPathComponent("server.pem").path,
            key: directory.appendingPathComponent("server.key").path
        )
        defer { server.stop() }
        let request = HTTPRequest(url: server.url("/echo", scheme: "https"), body: [7])

        let trusting = HTTPClient(caFile: directory.appendingPathComponent("ca.pem").path, logger: logger)
        defer { trusting.shutdown() }
        let response = try await send(request, with: trusting).get()
        #expect(response.status == 200)
        #expect(response.httpVersion == 1, "the server offers only http/1.1 by ALPN")
        #expect(try Echo(response).body == [7])

        let untrusting = HTTPClient(logger: logger)
        defer { untrusting.shutdown() }
        let message = try #require(transportMessage(try await send(request, with: untrusting)))
        #expect(message.contains("certificate"), "\(message)")

        // A request may waive verification (an upstream account's allow_self_signed).
        var waived = request
        waived.allowSelfSigned = true
        #expect(try await send(waived, with: untrusting).get().status == 200)
    }

    private func send(_ request: HTTPRequest, with client: HTTPClient) async throws -> Outcome {
        let done = Completions<Outcome>()
        client.send(request) { done.record($0) }
        return try await done.next(1)[0]
    }

    /// `ca.pem` (a CA) and `server.pem` + `server.key` (127.0.0.1 and localhost, signed by it).
    private func makeCertificates(in directory: URL) async throws {
        let config = """
            [req]
            distinguished_name = dn
            x509_extensions = ca
            [dn]
            [ca]
            basicConstraints = critical, CA:TRUE
            keyUsage = critical, keyCertSign, cRLSign
            subjectKeyIdentifier = hash
            [server]
            basicConstraints = CA:FALSE
            keyUsage = critical, digitalSignature
            extendedKeyUsage = serverAuth
            subjectAltName = IP:127.0.0.1, DNS:localhost
            """
        try config.write(to: directory.appendingPathComponent("openssl.cnf"), atomically: true, encoding: .utf8)
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        let ca = ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=ClawRelay test CA"]
        try await openssl(["req", "-x509", "-config", "openssl.cnf"] + key + ca, in: directory)
        let request = ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"]
        try await openssl(["req", "-new", "-config", "openssl.cnf"] + key + request, in: directory)
        try await openssl(
            [
                "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "1", "-days", "2", "-out", "server.pem",
                "-extfile", "openssl.cnf", "-extensions", "server",
            ],
            in: directory
        )
    }

    /// Runs openssl off the cooperative pool: the continuation resumes from its termination handler.
    private func openssl(_ arguments: [String], in directory: URL) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let status = await withCheckedContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch {
                process.terminationHandler = nil
                continuation.resume(returning: -1)
            }
        }
        try #require(status == 0, "openssl \(arguments.joined(separator: " ")) failed")
    }
}
