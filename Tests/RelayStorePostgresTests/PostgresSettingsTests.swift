import Foundation
import Testing

@testable import RelayStorePostgres

@Suite struct PostgresSettingsTests {
    @Test func readsTheURLForms() throws {
        let plain = try PostgresSettings(url: "postgres://relay@db.example:6543/clawrelay")
        #expect(plain.username == "relay")
        #expect(plain.database == "clawrelay")
        #expect(plain.endpoint == .tcp(host: "db.example", port: 6543))
        #expect(plain.tlsMode == .disable)
        #expect(plain.poolSize == 4)
        #expect(plain.passwordSource == .none)

        let defaults = try PostgresSettings(url: "postgresql://relay:p%40ss@[::1]/clawrelay?sslmode=require", poolSize: 64)
        #expect(defaults.endpoint == .tcp(host: "::1", port: 5432))
        #expect(defaults.password == "p@ss")
        #expect(defaults.tlsMode == .require)
        #expect(defaults.poolSize == 64)

        let socket = try PostgresSettings(url: "postgres://relay@/clawrelay?host=/run/postgresql")
        #expect(socket.endpoint == .socket(directory: "/run/postgresql", port: 5432))
        #expect(try PostgresSettings(url: "postgres://relay@h/d?sslmode=verify-full").tlsMode == .verifyFull)
    }

    @Test func refusesBadSettingsNamingWhatIsWrong() {
        let badURLs = [
            "mysql://relay@h/d": "postgres://",
            "postgres://relay@h:99999/d": "port 99999",
            "postgres://relay@h:abc/d": "port abc",
            "postgres://relay@h/d?sslmode=prefer": "sslmode=prefer",
            "postgres://relay@h/d?colour=blue": "unknown parameter colour",
            "postgres://h/d": "no user",
            "postgres://relay@h/": "no database",
            "postgres://relay@/d": "no host",
            "postgres://relay@/d?host=/run&sslmode=require": "Unix socket",
        ]
        for (url, problem) in badURLs { expectRefused(problem) { try PostgresSettings(url: url) } }
        for poolSize in [0, 65] { expectRefused("pool_size") { try PostgresSettings(url: "postgres://relay@h/d", poolSize: poolSize) } }
    }

    private func expectRefused(_ problem: String, _ parse: () throws -> PostgresSettings) {
        #expect {
            try parse()
        } throws: { error in
            let error = error as? PostgresStoreError
            return error?.code == .invalidSettings && error?.message.contains(problem) == true
        }
    }

    @Test func takesThePasswordFromTheURLThenTheFileThenTheEnvironment() throws {
        let file = TemporaryFile(contents: "from-file\nignored\n", mode: 0o600)
        let fromURL = try PostgresSettings(url: "postgres://relay:from-url@h/d", passwordFile: file.path, environmentPassword: "from-env")
        #expect(fromURL.password == "from-url" && fromURL.passwordSource == .url)
        let fromFile = try PostgresSettings(url: "postgres://relay@h/d", passwordFile: file.path, environmentPassword: "from-env")
        #expect(fromFile.password == "from-file" && fromFile.passwordSource == .file)
        let fromEnvironment = try PostgresSettings(url: "postgres://relay@h/d", environmentPassword: "from-env")
        #expect(fromEnvironment.password == "from-env" && fromEnvironment.passwordSource == .environment)
    }

    @Test func refusesAPasswordFileOthersCanRead() {
        let file = TemporaryFile(contents: "secret\n", mode: 0o640)
        #expect {
            try PostgresSettings(url: "postgres://relay@h/d", passwordFile: file.path)
        } throws: { error in
            (error as? PostgresStoreError)?.message.contains("readable by group or others (mode 640)") == true
        }
    }

    @Test func neverShowsThePassword() throws {
        let file = TemporaryFile(contents: "file-secret\n", mode: 0o600)
        let settings = [
            try PostgresSettings(url: "postgres://relay:url-secret@h:5433/d"),
            try PostgresSettings(url: "postgres://relay@h/d", passwordFile: file.path),
            try PostgresSettings(url: "postgres://relay@h/d", environmentPassword: "env-secret"),
        ]
        for setting in settings {
            let text = "\(setting) \(String(reflecting: setting.description))"
            #expect(!text.contains("secret"))
            #expect(text.contains("postgres://relay@h"))
        }
        #expect {
            try PostgresSettings(url: "postgres://relay:url-secret@h:0/d")
        } throws: { error in
            !"\(error)".contains("url-secret")
        }
    }
}

/// A file in the temporary directory with the given mode, removed afterwards.
final class TemporaryFile {
    let path = NSTemporaryDirectory() + "clawrelay-pgpass-" + UUID().uuidString

    init(contents: String, mode: Int) {
        FileManager.default.createFile(atPath: path, contents: Data(contents.utf8), attributes: [.posixPermissions: mode])
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
