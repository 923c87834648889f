/// Migration 7: upstream accounts as cluster-wide singletons, and turns handed to the node that
/// holds one.
///
/// An account (a `[[backends]]` entry of an upstream kind, by name) is held by one live node
/// incarnation at a time (`account_leases`). A lease lasts as long as its holder lives: a node
/// whose lease lapsed or that was declared dead holds nothing, and the next node to ask takes its
/// accounts. A turn whose conversation runs on an account another node holds is handed to that
/// node (`handed`): it keeps its place in its conversation's order and waits there until the
/// holder claims it.
extension PostgresSchema {
    static let accounts = [
        """
        CREATE TABLE account_leases (
          account text PRIMARY KEY,
          node_id text NOT NULL,
          incarnation uuid NOT NULL,
          acquired_at timestamptz NOT NULL DEFAULT now())
        """,
        "ALTER TABLE turns ADD COLUMN handed boolean NOT NULL DEFAULT false",
        "CREATE INDEX turns_handed ON turns (incarnation, order_seq) WHERE handed AND state = 0",
        holdAccounts,
        handOverRun,
        handedRuns,
        """
        DROP FUNCTION relay_turn_writes(smallint[], text[], text[], text[], text[], text[], text[], text[], text[], text[], text[],
          text[], text[], boolean[], smallint[], bigint[], text[], text[], int[], text[], int[], text[], bigint[], bigint[])
        """,
        writeTurnsKeepingTheBackend,
        "DROP FUNCTION relay_declare_dead(text, uuid, text, uuid, text)",
        declareDeadWithTheBackend,
    ]

    /// `relay_turn_writes` of migration 6, an accept's turn keeping the backend its protocol chose
    /// (`p_backend`, '' for the conversation's own), so a node that takes the turn over runs it there.
    static let writeTurnsKeepingTheBackend =
        writeTurns
        .replacingOccurrences(of: "p_queue_capacity bigint[])", with: "p_queue_capacity bigint[], p_backend text[])")
        .replacingOccurrences(of: "v_last - 1, '', p_device[i]", with: "v_last - 1, coalesce(p_backend[i], ''), p_device[i]")

    /// `relay_declare_dead` of migration 2, each adopted turn with its backend (o_backend).
    static let declareDeadWithTheBackend =
        declareDead
        .replacingOccurrences(
            of: "o_attachments text, o_attachments_hash text)",
            with: "o_attachments text, o_attachments_hash text, o_backend text)"
        )
        .replacingOccurrences(
            of: "NULL::text, NULL::text, NULL::text FROM messages m",
            with: "NULL::text, NULL::text, NULL::text, NULL::text FROM messages m"
        )
        .replacingOccurrences(
            of: "e.content, e.attachments::text, m.attachments_hash\n",
            with: "e.content, e.attachments::text, m.attachments_hash, a.backend\n"
        )

    /// Takes (when `p_take`), for a live node incarnation, each of `p_accounts` that no live
    /// incarnation holds, then returns who holds each of them now (an account nobody live holds is left out: only a
    /// node that is not live itself leaves one so). Two nodes asking at once: the row lock makes
    /// the second see the first's lease, alive, and leave it.
    static let holdAccounts = """
        CREATE FUNCTION relay_hold_accounts(p_node text, p_incarnation uuid, p_accounts text[], p_take boolean)
        RETURNS TABLE(o_account text, o_node text, o_incarnation uuid, o_state text) LANGUAGE plpgsql AS $$
        DECLARE a text;
        BEGIN
          IF p_take AND EXISTS (SELECT 1 FROM nodes WHERE node_id = p_node AND incarnation = p_incarnation AND expires_at >= now()) THEN
            FOREACH a IN ARRAY coalesce(p_accounts, '{}') LOOP
              INSERT INTO account_leases AS l (account, node_id, incarnation) VALUES (a, p_node, p_incarnation)
              ON CONFLICT (account) DO UPDATE SET node_id = excluded.node_id, incarnation = excluded.incarnation, acquired_at = now()
              WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.incarnation = l.incarnation AND n.expires_at >= now());
            END LOOP;
          END IF;
          RETURN QUERY SELECT l.account, l.node_id, l.incarnation, a.state FROM account_leases l
            LEFT JOIN accounts a ON a.name = l.account
            WHERE l.account = ANY(p_accounts)
              AND EXISTS (SELECT 1 FROM nodes n WHERE n.incarnation = l.incarnation AND n.expires_at >= now())
            ORDER BY l.account;
        END $$
        """

    /// Hands a turn the caller's incarnation owns (claimed or queued) to a live incarnation, with
    /// the backend it runs on: it waits there, in its place, until that node claims it. 0 handed,
    /// 1 the caller no longer owns it (declared dead, ended), 2 the holder is not live (nothing
    /// changed).
    static let handOverRun = """
        CREATE FUNCTION relay_hand_over(p_run text, p_from uuid, p_node text, p_incarnation uuid, p_backend text)
        RETURNS smallint LANGUAGE plpgsql AS $$
        BEGIN
          IF NOT EXISTS (SELECT 1 FROM turns WHERE run_id = p_run AND incarnation = p_from AND state IN (0, 1)) THEN RETURN 1; END IF;
          IF NOT EXISTS (SELECT 1 FROM nodes WHERE node_id = p_node AND incarnation = p_incarnation AND expires_at >= now()) THEN
            RETURN 2;
          END IF;
          UPDATE turns SET state = 0, node_id = p_node, incarnation = p_incarnation, handed = true, backend = p_backend,
            started_at = NULL
          WHERE run_id = p_run AND incarnation = p_from AND state IN (0, 1);
          RETURN CASE WHEN FOUND THEN 0 ELSE 1 END;
        END $$
        """

    /// The turns handed to an incarnation that still wait (their messages active), oldest first,
    /// with their stored messages and the backend they run on: rows as `relay_declare_dead`
    /// returns its adopted turns (o_kind 1, o_seq the turn's order).
    static let handedRuns = """
        CREATE FUNCTION relay_handed_runs(p_incarnation uuid)
        RETURNS TABLE(o_kind smallint, o_run text, o_stream text, o_conversation text, o_device text, o_client text, o_seq bigint,
          o_answer_event text, o_answer_seq bigint, o_content text, o_attachments text, o_attachments_hash text, o_backend text)
        LANGUAGE sql AS $$
          SELECT 1::smallint, t.run_id, t.stream_id, t.conversation_id, t.device_id, t.client_id, t.order_seq, m.answer_event_id,
            m.answer_seq, e.content, e.attachments::text, m.attachments_hash, t.backend
          FROM turns t JOIN messages m ON m.run_id = t.run_id JOIN events e ON e.id = m.user_event_id
          WHERE t.incarnation = p_incarnation AND t.handed AND t.state = 0 AND m.state = 1
          ORDER BY t.order_seq
        $$
        """
}
