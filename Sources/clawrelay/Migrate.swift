import ArgumentParser
import Foundation
import Logging
import RelayServer
import RelayStore
import RelayStorePostgres

/// `clawrelay migrate --to-postgres URL`: the SQLite store of a stopped relay copied into an empty
/// PostgreSQL database, so the relay can start on it with the same data directory.
struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a stopped relay's SQLite store into an empty PostgreSQL database (then start it with [store] kind = \"postgres\")."
    )
    @OptionGroup var options: DataOptions
    @Option(name: .customLong("to-postgres"), help: "postgres://user[:password]@host[:port]/database[?sslmode=…] of an empty database.")
    var url: String
    @Option(name: .customLong("password-file"), help: "A file holding the password (else the URL's, else PGPASSWORD).")
    var passwordFile: String?

    func run() throws {
        let config = options.loadExisting()
        let directory = config.dataDirectory
        let sqlitePath = (directory as NSString).appendingPathComponent("relay.sqlite")
        guard FileManager.default.fileExists(atPath: sqlitePath) else { fail("no relay.sqlite in \(directory): nothing to migrate") }
        // Opening a file that is no database would make it one (an empty store, copied as such).
        let header = FileHandle(forReadingAtPath: sqlitePath).flatMap { try? $0.read(upToCount: 16) } ?? Data()
        guard header == Data("SQLite format 3\0".utf8) else { fail("\(sqlitePath) is not a SQLite database: nothing to migrate") }
        // What SQLite creates beside the store (its log) is private, as everything the relay writes.
        umask(0o077)
        let settings: PostgresSettings
        do {
            settings = try PostgresSettings(
                url: url,
                passwordFile: passwordFile,
                environmentPassword: ProcessInfo.processInfo.environment["PGPASSWORD"]
            )
        } catch {
            fail("\(error)")
        }
        // Held until exit: a relay started meanwhile is refused, as a second relay would be.
        do { try DataDirectory(path: directory).lock() } catch { fail("\(error)") }
        let store: Store
        do { store = try Store(dataDirectory: directory, executor: nil) } catch { fail("cannot open \(sqlitePath): \(error)") }
        var logger = Logger(label: "clawrelay.migrate")
        logger.logLevel = .warning
        print("copying \(sqlitePath) into \(StoreSettings.withoutPassword(url))")
        let counts: [SQLiteToPostgres.TableCount]
        do {
            counts = try SQLiteToPostgres.copy(
                from: store,
                to: settings,
                now: Int64(Date().timeIntervalSince1970 * 1000),
                maxAssetBytes: config.store.maxSharedAssetBytes,
                logger: logger
            ) {
                print("  \($0.table): \($0.rows) row\($0.rows == 1 ? "" : "s")")
            }
        } catch {
            store.close()
            fail("migrate failed, nothing was copied: \(error)")
        }
        store.close()
        let total = counts.reduce(0) { $0 + $1.rows }
        print("copied \(total) rows in \(counts.count) tables in one transaction")
        print("the files of \(directory) stay there and are still needed: the JWT signing key (the tokens paired devices hold),")
        print("the gateway identity, account files, uploads and the audit (audit.sqlite); relay.sqlite is left as it was, unread.")
        print("Start the relay with this same data directory and this in its config.toml:")
        print("")
        print("[store]")
        print("kind = \"postgres\"")
        print("url = \"\(StoreSettings.withoutPassword(url, masked: false))\"")
        if let passwordFile {
            print("password_file = \"\(passwordFile)\"")
        } else if settings.passwordSource != .none {
            print("# password_file = \"/path/to/pgpass\"             # or PGPASSWORD in the relay's environment")
        }
    }
}
