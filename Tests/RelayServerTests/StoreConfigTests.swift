import Foundation
import RelayServer
import Testing

@Suite struct StoreConfigTests {
    @Test func sqliteIsTheDefault() throws {
        let config = try RelayConfig.parse(text: "[admin]\n", fileName: "relay.toml")
        #expect(config.store.kind == .sqlite && config.store.url == nil)
        #expect(RelayConfig.embeddedDefault().store.kind == .sqlite)
    }

    @Test func postgresWithItsSettings() throws {
        let text = """
            [store]
            kind = "postgres"
            url = "postgres://relay@db.internal:5433/clawrelay?sslmode=require"
            password_file = "/etc/clawrelay/pgpass"
            pool_size = 8
            """
        let store = try RelayConfig.parse(text: text, fileName: "relay.toml").store
        #expect(store.kind == .postgres && store.poolSize == 8 && store.passwordFile == "/etc/clawrelay/pgpass")
        #expect(store.url == "postgres://relay@db.internal:5433/clawrelay?sslmode=require")
    }

    @Test func refusesWhatCannotWork() {
        expectRejection("[store]\nkind = \"mysql\"\n", .invalidValue, "relay.toml:2: [store] kind: expected sqlite or postgres, got \"mysql\"")
        expectRejection("[store]\nkind = \"postgres\"\n", .missingKey, "relay.toml")
        expectRejection("[store]\nkind = \"postgres\"\nurl = \"mysql://h/db\"\n", .invalidValue, "relay.toml:3: [store] url:")
        expectRejection(
            "[store]\nkind = \"postgres\"\nurl = \"postgres://u@h/db?sslmode=sometimes\"\n",
            .invalidValue,
            "relay.toml:3: [store] url:"
        )
        expectRejection(
            "[store]\nkind = \"postgres\"\nurl = \"postgres://u@h/db\"\npool_size = 500\n",
            .invalidValue,
            "relay.toml:4: [store] pool_size:"
        )
        expectRejection("[store]\nurl = \"postgres://u@h/db\"\n", .invalidValue, "relay.toml:2: [store] url: only for kind = \"postgres\"")
        expectRejection("[store]\nfile = \"x\"\n", .unknownKey, "relay.toml")
    }

    /// The store's description (logs, reload messages) never shows the URL's password.
    @Test func theDescriptionHidesThePassword() throws {
        let text = "[store]\nkind = \"postgres\"\nurl = \"postgres://relay:s3cret@db:5432/clawrelay\"\n"
        let store = try RelayConfig.parse(text: text, fileName: "relay.toml").store
        #expect(store.description == "postgres (postgres://relay:***@db:5432/clawrelay)")
        #expect(!store.description.contains("s3cret"))
    }

    /// Moving to another store takes a restart; a reload keeps the running one.
    @Test func aReloadDoesNotChangeTheStore() throws {
        let old = try RelayConfig.parse(text: "[admin]\n", fileName: "relay.toml")
        let new = try RelayConfig.parse(text: "[admin]\n[store]\nkind = \"postgres\"\nurl = \"postgres://u@h/db\"\n", fileName: "relay.toml")
        let changes = ConfigDiff.changes(from: old, to: new)
        #expect(changes.contains { $0.needsRestart && $0.description.contains("[store]") })
        #expect(ConfigDiff.applicable(from: old, to: new).store.kind == .sqlite)
    }
}
