/// Migration 10: what a node used to keep only in its data directory, shared by every node. An
/// uploaded file's bytes (`asset_bytes`, one row per asset, up to `[store] max_shared_asset_bytes`)
/// so a file uploaded through one node downloads through any other. The gateway identity's key
/// lives in `meta` beside the Clawline signing key.
extension PostgresSchema {
    static let sharedFiles = [
        "CREATE TABLE asset_bytes (asset_id text PRIMARY KEY REFERENCES assets (id) ON DELETE CASCADE, bytes bytea NOT NULL)"
    ]
}
