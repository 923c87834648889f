import RelayStorePostgres

extension ConfigDecoder {
    static let storeKeys = ["kind", "url", "password_file", "pool_size", "max_shared_asset_bytes"]

    /// `[store]`: `kind` sqlite (the default) or postgres, which needs `url`; the URL is checked
    /// here (scheme, host, database, sslmode) so a typo stops the relay before it starts.
    static func store(_ table: ConfigTable) throws(ConfigError) -> StoreSettings {
        try table.rejectUnknownKeys(storeKeys)
        var settings = StoreSettings()
        if let kind = try table.string("kind") {
            guard let parsed = StoreSettings.Kind(rawValue: kind) else {
                let names = StoreSettings.Kind.allCases.map(\.rawValue).joined(separator: " or ")
                throw table.error(.invalidValue, key: "kind", "expected \(names), got \(quoted(kind))")
            }
            settings.kind = parsed
        }
        settings.url = try table.string("url")
        settings.passwordFile = try table.string("password_file")
        settings.poolSize = try table.integer("pool_size") ?? StoreSettings.defaultPoolSize
        if let shared = try table.integer("max_shared_asset_bytes") {
            let limit = StoreSettings.maxSharedAssetBytesLimit
            guard shared <= limit else {
                throw table.error(.invalidValue, key: "max_shared_asset_bytes", "expected 1 to \(limit) (256 MiB), got \(shared)")
            }
            settings.maxSharedAssetBytes = shared
        }
        switch settings.kind {
        case .sqlite:
            for key in ["url", "password_file", "pool_size", "max_shared_asset_bytes"] where table.contains(key) {
                throw table.error(.invalidValue, key: key, "only for kind = \"postgres\"; SQLite keeps its file in the data directory")
            }
        case .postgres:
            guard let url = settings.url, !url.isEmpty else {
                throw table.error(.missingKey, key: "url", "kind = \"postgres\" needs url = \"postgres://user@host:5432/database\"")
            }
            do {
                _ = try PostgresSettings(url: url, poolSize: settings.poolSize)
            } catch {
                let message = (error as? PostgresStoreError)?.message ?? "\(error)"
                throw table.error(.invalidValue, key: message.hasPrefix("pool_size") ? "pool_size" : "url", message)
            }
        }
        return settings
    }
}
