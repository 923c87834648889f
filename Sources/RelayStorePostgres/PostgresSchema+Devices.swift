/// Migration 4: devices, their tokens and pairings, push, assets, accounts, run reports,
/// approvals, operator commands and pairing links, as the SQLite store keeps them
/// (`RelayStore/Migrations*.swift`), types adapted: times the core passes in are milliseconds
/// since 1970 in `*_ms` columns, 0/1 flags are `boolean`, JSON is `text` stored byte for byte.
///
/// `devices.scopes`, `device_tokens.scopes` and `devices.role` hold comma-separated lists, as in
/// SQLite. `pending_pairings` is keyed by device, as in SQLite (a newer request of the same device
/// replaces the row whatever its protocol).
///
/// Listings order text `COLLATE "C"` (byte order, as SQLite's), whatever the database's locale.
extension PostgresSchema {
    static let devices = [
        "CREATE TABLE users (id text PRIMARY KEY, created_ms bigint NOT NULL)",
        """
        CREATE TABLE devices (
          id text PRIMARY KEY, user_id text NOT NULL, protocol text NOT NULL DEFAULT 'clawline', claimed_name text, device_info text,
          is_admin boolean NOT NULL DEFAULT false, status text NOT NULL, token_hash text, token_delivered boolean NOT NULL DEFAULT false,
          created_ms bigint NOT NULL, last_seen_ms bigint, public_key text, role text, scopes text,
          presence text NOT NULL DEFAULT 'offline', presence_ms bigint)
        """,
        "CREATE INDEX devices_user ON devices (user_id, protocol)",
        "CREATE INDEX devices_token ON devices (token_hash)",
        """
        CREATE TABLE device_tokens (
          device_id text NOT NULL, role text NOT NULL, token_hash text, scopes text, issued_ms bigint NOT NULL, revoked_ms bigint,
          PRIMARY KEY (device_id, role))
        """,
        """
        CREATE TABLE bot_pairings (
          device_id text NOT NULL, bot_id text NOT NULL, token_hash text NOT NULL, created_ms bigint NOT NULL, PRIMARY KEY (device_id, bot_id))
        """,
        """
        CREATE TABLE pending_pairings (
          device_id text PRIMARY KEY, claimed_name text, device_info text, created_ms bigint NOT NULL, expires_ms bigint NOT NULL,
          protocol text NOT NULL DEFAULT 'clawline', request_id text, reason text)
        """,
        """
        CREATE TABLE push_targets (
          device_id text NOT NULL, kind text NOT NULL, token text NOT NULL, platform text, created_ms bigint NOT NULL, retired_ms bigint,
          retired_reason text, PRIMARY KEY (device_id, kind))
        """,
        """
        CREATE TABLE push_pending (
          id text PRIMARY KEY, device_id text NOT NULL, user_id text NOT NULL, conversation_id text NOT NULL, count bigint NOT NULL,
          last_seq bigint NOT NULL, failed boolean NOT NULL, text text NOT NULL, run_ms bigint NOT NULL, created_ms bigint NOT NULL,
          due_ms bigint NOT NULL)
        """,
        "CREATE INDEX push_pending_due ON push_pending (due_ms)",
        """
        CREATE TABLE push_attempts (
          id bigserial PRIMARY KEY, at_ms bigint NOT NULL, device_id text NOT NULL, user_id text, conversation_id text NOT NULL,
          sink text NOT NULL, target text NOT NULL, status bigint NOT NULL, outcome text NOT NULL, reason text NOT NULL)
        """,
        "CREATE INDEX push_attempts_at ON push_attempts (at_ms)",
        """
        CREATE TABLE assets (
          id text PRIMARY KEY, user_id text NOT NULL, mime_type text NOT NULL, size bigint NOT NULL, path text NOT NULL,
          created_ms bigint NOT NULL)
        """,
        """
        CREATE TABLE accounts (
          name text PRIMARY KEY, kind text NOT NULL, state text NOT NULL, detail text NOT NULL, updated_ms bigint NOT NULL)
        """,
        """
        CREATE TABLE turn_reports (
          run_id text PRIMARY KEY, user_id text NOT NULL, conversation_id text NOT NULL, backend text NOT NULL,
          cost_usd double precision, input_tokens bigint, output_tokens bigint, cache_read_tokens bigint, cache_creation_tokens bigint,
          duration_ms bigint, model_turns bigint, permission_denials bigint NOT NULL DEFAULT 0, terminal_reason text,
          created_ms bigint NOT NULL)
        """,
        "CREATE INDEX turn_reports_conversation ON turn_reports (conversation_id, created_ms)",
        """
        CREATE TABLE approvals (
          id text PRIMARY KEY, short_id text NOT NULL, user_id text NOT NULL, conversation_id text NOT NULL, run_id text NOT NULL,
          backend text NOT NULL, tool_name text NOT NULL, summary text NOT NULL, created_ms bigint NOT NULL, expires_ms bigint NOT NULL,
          decision text, cause text, decided_by_device text, decided_by_name text, decided_by_protocol text, resolved_ms bigint)
        """,
        "CREATE INDEX approvals_created ON approvals (created_ms)",
        "CREATE INDEX approvals_pending ON approvals (created_ms) WHERE resolved_ms IS NULL",
        """
        CREATE TABLE operator_commands (
          id bigserial PRIMARY KEY, action text NOT NULL, device_id text NOT NULL, user_id text, created_ms bigint NOT NULL,
          done_ms bigint, result text)
        """,
        "CREATE TABLE pair_links (token_hash text PRIMARY KEY, expires_ms bigint NOT NULL, used_ms bigint)",
        "CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL)",
    ]
}
