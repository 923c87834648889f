/// Migration 2: the cluster's turn ledger (SCALE-OUT.md §4.6, §4.9). A `turns` row with a node is a
/// turn registered in the ledger (accepted by, claimed by or adopted by that node incarnation); a
/// queued row without one (a single node's accept) is not the ledger's. Declaring a node dead is
/// `relay_declare_dead`'s alone: the sweep only names the dead.
extension PostgresSchema {
    static let cluster = [
        "DROP FUNCTION relay_sweep_nodes()",
        "DROP FUNCTION relay_register_node(text, uuid, double precision)",
        "DROP FUNCTION relay_bury_node(text, uuid)",
        "DROP FUNCTION relay_accept_batch(text[], text[], text[], text[], text[], text[], text[], text[], text[], text[], text[], text[])",
        "CREATE INDEX turns_node ON turns (incarnation, order_seq) WHERE state IN (0, 1)",
        acceptRegistering, claimRuns, withdrawRuns, declareDead, sweepDetecting, registerReplacing,
    ]

    /// `relay_accept_batch` of migration 1, with the accepting node (`p_node` '' = none) on the turn.
    static let acceptRegistering =
        accept
        .replacingOccurrences(of: "p_backend text[])", with: "p_backend text[], p_node text[], p_incarnation text[])")
        .replacingOccurrences(
            of: "INSERT INTO turns (run_id, conversation_id, stream_id, order_seq, backend, device_id, client_id, state)",
            with: "INSERT INTO turns (run_id, conversation_id, stream_id, order_seq, backend, device_id, client_id, state, node_id, incarnation)"
        )
        .replacingOccurrences(
            of: "p_backend[i], p_device[i], p_client[i], 0);",
            with: "p_backend[i], p_device[i], p_client[i], 0,\n      NULLIF(p_node[i], ''), NULLIF(p_incarnation[i], '')::uuid);"
        )

    /// Asks to run each run for a node incarnation: o_claim 0 running, 1 waiting, 2 ended (its
    /// message is no longer active), 3 fenced (the incarnation is not a live node). A run with an
    /// active message and no registered turn is registered first (order = its user event's seq).
    /// It runs when it runs there already, or when nothing of its conversation runs and no
    /// registered turn accepted before it waits; `turns_one_running` turns a race into "waiting".
    static let claimRuns = """
        CREATE FUNCTION relay_claim_runs(p_run text[], p_nodes text[], p_incarnations uuid[])
        RETURNS TABLE(o_claim smallint) LANGUAGE plpgsql AS $$
        DECLARE i int; m messages%ROWTYPE; t turns%ROWTYPE; v_order bigint; v_node text; v_incarnation uuid;
        BEGIN
          FOR i IN 1 .. coalesce(array_length(p_run, 1), 0) LOOP
            v_node := p_nodes[i]; v_incarnation := p_incarnations[i];
            SELECT * INTO m FROM messages WHERE run_id = p_run[i];
            IF NOT FOUND OR m.state <> 1 THEN
              DELETE FROM turns WHERE run_id = p_run[i] AND state = 0;
              RETURN QUERY SELECT 2::smallint; CONTINUE;
            END IF;
            IF NOT EXISTS (SELECT 1 FROM nodes WHERE node_id = v_node AND incarnation = v_incarnation) THEN
              RETURN QUERY SELECT 3::smallint; CONTINUE;
            END IF;
            SELECT * INTO t FROM turns WHERE run_id = p_run[i] FOR UPDATE;
            IF NOT FOUND THEN
              SELECT seq INTO v_order FROM events WHERE id = m.user_event_id;
              INSERT INTO turns (run_id, conversation_id, stream_id, order_seq, backend, device_id, client_id, state, node_id, incarnation)
              VALUES (p_run[i], m.conversation_id, m.stream_id, coalesce(v_order, 0), '', m.device_id, m.client_id, 0, v_node,
                v_incarnation)
              ON CONFLICT (run_id) DO NOTHING;
              SELECT * INTO t FROM turns WHERE run_id = p_run[i] FOR UPDATE;
            ELSIF t.state = 0 AND t.incarnation IS NULL THEN
              UPDATE turns SET node_id = v_node, incarnation = v_incarnation WHERE run_id = p_run[i] RETURNING * INTO t;
            END IF;
            IF t.state = 1 THEN
              -- Running here: still ours. Running for another incarnation: not this node's to run.
              RETURN QUERY SELECT CASE WHEN t.incarnation = v_incarnation THEN 0 ELSE 2 END::smallint; CONTINUE;
            ELSIF t.state <> 0 THEN
              RETURN QUERY SELECT 2::smallint; CONTINUE;
            END IF;
            IF EXISTS (SELECT 1 FROM turns WHERE conversation_id = t.conversation_id AND state = 1)
               OR EXISTS (SELECT 1 FROM turns WHERE conversation_id = t.conversation_id AND state = 0 AND incarnation IS NOT NULL
                          AND order_seq < t.order_seq) THEN
              RETURN QUERY SELECT 1::smallint; CONTINUE;
            END IF;
            BEGIN
              UPDATE turns SET state = 1, node_id = v_node, incarnation = v_incarnation, started_at = now() WHERE run_id = p_run[i];
              RETURN QUERY SELECT 0::smallint;
            EXCEPTION WHEN unique_violation THEN
              RETURN QUERY SELECT 1::smallint;
            END;
          END LOOP;
        END $$
        """

    /// Gives runs back without ending them: their queued or running rows go (their messages stay
    /// active; a later claim registers them again). o_removed per run.
    static let withdrawRuns = """
        CREATE FUNCTION relay_withdraw_runs(p_run text[])
        RETURNS TABLE(o_removed boolean) LANGUAGE plpgsql AS $$
        DECLARE i int;
        BEGIN
          FOR i IN 1 .. coalesce(array_length(p_run, 1), 0) LOOP
            DELETE FROM turns WHERE run_id = p_run[i] AND state IN (0, 1);
            RETURN QUERY SELECT FOUND;
          END LOOP;
        END $$
        """

    /// Declares a node incarnation dead, in one transaction: its running turns fail as
    /// `relay_end_batch`'s failure path does (o_kind 0, with the failure's seq), its queued turns
    /// with active messages become the survivor's and come back with their stored messages
    /// (o_kind 1, oldest first), and its `nodes` row goes (its heartbeat finds itself fenced). One
    /// NOTIFY of the failures' positions. Every write is a predicate on the dead incarnation, so a
    /// second call changes nothing.
    static let declareDead = """
        CREATE FUNCTION relay_declare_dead(p_node text, p_incarnation uuid, p_survivor_node text, p_survivor uuid, p_reason text)
        RETURNS TABLE(o_kind smallint, o_run text, o_stream text, o_conversation text, o_device text, o_client text, o_seq bigint,
          o_answer_event text, o_answer_seq bigint, o_content text, o_attachments text, o_attachments_hash text)
        LANGUAGE plpgsql AS $$
        DECLARE t turns%ROWTYPE; v_seq bigint; v_streams text[] := '{}'; v_prev bigint[] := '{}'; v_lasts bigint[] := '{}';
        BEGIN
          FOR t IN UPDATE turns SET state = 3, ended_at = now() WHERE incarnation = p_incarnation AND state = 1 RETURNING * LOOP
            v_seq := relay_end_turn(t.run_id, t.stream_id, t.conversation_id, p_reason, false);
            v_streams := v_streams || t.stream_id; v_prev := v_prev || (v_seq - 1); v_lasts := v_lasts || v_seq;
            RETURN QUERY SELECT 0::smallint, t.run_id, t.stream_id, t.conversation_id, t.device_id, t.client_id, v_seq,
              m.answer_event_id, m.answer_seq, NULL::text, NULL::text, NULL::text FROM messages m WHERE m.run_id = t.run_id;
          END LOOP;
          DELETE FROM turns q USING messages m WHERE q.incarnation = p_incarnation AND q.state = 0 AND m.run_id = q.run_id
            AND m.state <> 1;
          RETURN QUERY
            WITH adopted AS (
              UPDATE turns SET node_id = p_survivor_node, incarnation = p_survivor WHERE incarnation = p_incarnation AND state = 0
              RETURNING *)
            SELECT 1::smallint, a.run_id, a.stream_id, a.conversation_id, a.device_id, a.client_id, a.order_seq, m.answer_event_id,
              m.answer_seq, e.content, e.attachments::text, m.attachments_hash
            FROM adopted a JOIN messages m ON m.run_id = a.run_id JOIN events e ON e.id = m.user_event_id ORDER BY a.order_seq;
          DELETE FROM nodes WHERE node_id = p_node AND incarnation = p_incarnation;
          PERFORM relay_notify(v_streams, v_prev, v_lasts);
        END $$
        """

    /// Names the dead without touching them: node rows whose lease expired or whose advisory lock
    /// is gone (their control session ended), and incarnations that still own queued or running
    /// turns but have no node row (replaced by a restart). `relay_declare_dead` does the rest.
    static let sweepDetecting = """
        CREATE FUNCTION relay_sweep_nodes()
        RETURNS TABLE(o_node text, o_incarnation uuid) LANGUAGE sql AS $$
          SELECT node_id, incarnation FROM nodes WHERE expires_at < now() OR NOT EXISTS (
            SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtext('clawrelay-node:' || nodes.node_id)::bigint)
          UNION
          SELECT DISTINCT t.node_id, t.incarnation FROM turns t WHERE t.state IN (0, 1) AND t.incarnation IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.incarnation = t.incarnation)
          ORDER BY 1, 2
        $$
        """

    /// Registers a node incarnation with its lease, replacing an earlier incarnation of the same
    /// node id (a restart: the caller holds the node's lock now). Returns that earlier incarnation,
    /// for the caller to declare dead (the sweep names it too while it owns turns).
    static let registerReplacing = """
        CREATE FUNCTION relay_register_node(p_node text, p_incarnation uuid, p_lease_seconds double precision)
        RETURNS TABLE(o_previous uuid) LANGUAGE plpgsql AS $$
        DECLARE v_old uuid;
        BEGIN
          SELECT incarnation INTO v_old FROM nodes WHERE node_id = p_node FOR UPDATE;
          INSERT INTO nodes (node_id, incarnation, started_at, heartbeat_at, expires_at)
          VALUES (p_node, p_incarnation, now(), now(), now() + make_interval(secs => p_lease_seconds))
          ON CONFLICT (node_id) DO UPDATE SET incarnation = excluded.incarnation, started_at = now(), heartbeat_at = now(),
            expires_at = excluded.expires_at;
          IF v_old IS NOT NULL AND v_old <> p_incarnation THEN RETURN QUERY SELECT v_old; END IF;
        END $$
        """
}
