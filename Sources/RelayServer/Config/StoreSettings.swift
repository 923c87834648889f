/// `[store]`: where the relay keeps what it must not lose. SQLite in the data directory is the
/// embedded default; PostgreSQL (`kind = "postgres"`) is for a relay that will run as several
/// nodes on one database (issue 29, `docs/cluster.md`).
public struct StoreSettings: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case sqlite
        case postgres
    }

    public var kind = Kind.sqlite
    /// `postgres://user[:password]@host[:port]/database[?sslmode=…]`; required for PostgreSQL.
    public var url: String?
    /// A file holding the password (refused when others can read it); else the URL's, else `PGPASSWORD`.
    public var passwordFile: String?
    /// Connections a node may open for reads.
    public var poolSize = 4
    /// On PostgreSQL, the largest upload kept in the database for every node (larger ones are
    /// refused: a file on one node's disk would fail to download through the others).
    public var maxSharedAssetBytes = Self.defaultMaxSharedAssetBytes

    public init() {}

    public static let defaultPoolSize = 4
    /// 32 MiB.
    public static let defaultMaxSharedAssetBytes = 33_554_432
    /// 256 MiB: a row's bytes travel whole through one connection and the node's memory.
    public static let maxSharedAssetBytesLimit = 268_435_456

    /// The largest upload a Clawline listener accepts with this store: on PostgreSQL no more than
    /// it shares (`max_shared_asset_bytes`).
    public func uploadLimit(_ listenerLimit: Int) -> Int {
        kind == .postgres ? min(listenerLimit, maxSharedAssetBytes) : listenerLimit
    }
}

extension StoreSettings: CustomStringConvertible {
    /// The kind, and for PostgreSQL where, without the URL's password.
    public var description: String {
        guard kind == .postgres, let url else { return kind.rawValue }
        return "postgres (\(Self.withoutPassword(url)))"
    }

    /// The URL with any password replaced by `***` (left out when `masked` is false).
    public static func withoutPassword(_ url: String, masked: Bool = true) -> String {
        guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].firstIndex(of: "@") else { return url }
        let credentials = url[scheme.upperBound..<at]
        guard let colon = credentials.firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + (masked ? ":***" : "") + String(url[at...])
    }
}
