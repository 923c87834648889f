/// Migration 9: operator commands as control messages (docs/cluster.md). A command names the
/// node incarnation that must run it (`operator_commands.incarnation`; NULL: every live node),
/// each node that ran it leaves an acknowledgement (`operator_acks`), and the command's answer
/// is written once, under the command's row lock (`PostgresControlQueries.settle`). A pending
/// pairing request records the node incarnation that holds it (NULL: a relay on its own). Each
/// cluster node records its data directory (`node_data_dirs`), where its own audit stays.
extension PostgresSchema {
    static let control = [
        "ALTER TABLE operator_commands ADD COLUMN node_id text",
        "ALTER TABLE operator_commands ADD COLUMN incarnation uuid",
        "ALTER TABLE operator_commands ADD COLUMN queued_at timestamptz NOT NULL DEFAULT now()",
        "CREATE INDEX operator_commands_open ON operator_commands (id) WHERE done_ms IS NULL",
        """
        CREATE TABLE operator_acks (
          command_id bigint NOT NULL REFERENCES operator_commands (id) ON DELETE CASCADE, node_id text NOT NULL,
          result text NOT NULL, acked_ms bigint NOT NULL, PRIMARY KEY (command_id, node_id))
        """,
        "ALTER TABLE pending_pairings ADD COLUMN node_id text",
        "ALTER TABLE pending_pairings ADD COLUMN incarnation uuid",
        // Where each cluster node keeps its data (its audit), for `clawrelay audit --node`.
        "CREATE TABLE node_data_dirs (node_id text PRIMARY KEY, data_dir text NOT NULL, updated_ms bigint NOT NULL)",
    ]
}
