import Logging
import RelayCore
import RelayStore
import RelayStorePostgres

/// The store the operator commands read and write (`OperatorStore`), as the relay's `[store]`
/// names it: here because only the server knows both store modules and the configuration.
public enum OperatorStorage {
    /// Opens the store of `config` (the configuration the relay started from): `relay.sqlite` in
    /// its data directory, or its PostgreSQL database (connected and migrated).
    public static func open(_ config: RelayConfig, logger: Logger) throws -> any OperatorStore {
        switch config.store.kind {
        case .sqlite: try SQLiteOperatorStore(dataDirectory: config.dataDirectory)
        case .postgres: try PostgresOperatorStore(settings: PostgresStorage.settings(config.store), logger: logger)
        }
    }
}
