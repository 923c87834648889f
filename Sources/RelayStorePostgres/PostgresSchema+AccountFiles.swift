/// Migration 13: an upstream account's credential files (the Clawline device file, the OpenClaw
/// operator key and token, DiscoClaw's state) travel with its lease (`account_files`, one row per
/// account and file name), so the node that takes an account over presents the same identity
/// upstream. Only the account's live holder writes them (`relay_store_account_files`).
extension PostgresSchema {
    static let accountFiles = [
        """
        CREATE TABLE account_files (
          account text NOT NULL, name text NOT NULL, bytes bytea NOT NULL, sha256 bytea NOT NULL, updated_ms bigint NOT NULL,
          node_id text NOT NULL, incarnation uuid NOT NULL, PRIMARY KEY (account, name))
        """,
        storeAccountFiles,
    ]

    /// Stores, for the account's live holder only, the files `p_names` (with `p_bytes`) and drops
    /// the account's stored files not named in `p_present` (gone from the holder's folder). The
    /// lease row is locked (shared) first, so a node taking the account over waits for the write
    /// and a write after the takeover is refused. False: the caller does not hold the account.
    static let storeAccountFiles = """
        CREATE FUNCTION relay_store_account_files(p_node text, p_incarnation uuid, p_account text, p_present text[], p_names text[],
          p_bytes bytea[], p_now bigint)
        RETURNS boolean LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM 1 FROM account_leases l WHERE l.account = p_account AND l.node_id = p_node AND l.incarnation = p_incarnation
            AND EXISTS (SELECT 1 FROM nodes n WHERE n.node_id = p_node AND n.incarnation = p_incarnation AND n.expires_at >= now())
            FOR SHARE OF l;
          IF NOT FOUND THEN RETURN false; END IF;
          DELETE FROM account_files WHERE account = p_account AND NOT (name = ANY(coalesce(p_present, '{}')));
          FOR i IN 1 .. coalesce(array_length(p_names, 1), 0) LOOP
            INSERT INTO account_files (account, name, bytes, sha256, updated_ms, node_id, incarnation)
            VALUES (p_account, p_names[i], p_bytes[i], sha256(p_bytes[i]), p_now, p_node, p_incarnation)
            ON CONFLICT (account, name) DO UPDATE SET bytes = excluded.bytes, sha256 = excluded.sha256, updated_ms = excluded.updated_ms,
              node_id = excluded.node_id, incarnation = excluded.incarnation;
          END LOOP;
          RETURN true;
        END $$
        """
}
