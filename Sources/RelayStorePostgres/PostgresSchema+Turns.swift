/// The functions that move turns: claim, finish, fail, and the sweep of dead nodes.
extension PostgresSchema {
    /// Claims the oldest queued turn of each conversation for a live node incarnation. A
    /// conversation with a running turn is skipped, and `turns_one_running` turns a race between
    /// two claimers into a unique violation for the loser: o_run is NULL for "not claimed".
    static let claim = """
        CREATE FUNCTION relay_claim_batch(p_conversation text[], p_node text, p_incarnation uuid)
        RETURNS TABLE(o_run text, o_order_seq bigint) LANGUAGE plpgsql AS $$
        DECLARE i int; v_run text; v_order bigint; v_alive boolean;
        BEGIN
          v_alive := EXISTS (SELECT 1 FROM nodes WHERE node_id = p_node AND incarnation = p_incarnation);
          FOR i IN 1 .. coalesce(array_length(p_conversation, 1), 0) LOOP
            v_run := NULL; v_order := NULL;
            IF v_alive AND NOT EXISTS (SELECT 1 FROM turns WHERE conversation_id = p_conversation[i] AND state = 1) THEN
              SELECT run_id, order_seq INTO v_run, v_order FROM turns
              WHERE conversation_id = p_conversation[i] AND state = 0 ORDER BY order_seq LIMIT 1 FOR UPDATE;
              IF v_run IS NOT NULL THEN
                BEGIN
                  UPDATE turns SET state = 1, node_id = p_node, incarnation = p_incarnation, started_at = now()
                  WHERE run_id = v_run AND state = 0;
                  IF NOT FOUND THEN v_run := NULL; v_order := NULL; END IF;
                EXCEPTION WHEN unique_violation THEN
                  v_run := NULL; v_order := NULL;
                END;
              END IF;
            END IF;
            RETURN QUERY SELECT v_run, v_order;
          END LOOP;
        END $$
        """

    /// Ends running turns of this incarnation: state 2 stores the answer (`p_event`, `p_text`),
    /// 3 failed and 4 aborted store the failure (`p_text` is the reason). o_seq NULL = refused: the
    /// turn is not running here any more (the node was declared dead, or it ended already).
    static let end = """
        CREATE FUNCTION relay_end_batch(p_run text[], p_state smallint[], p_event text[], p_text text[], p_incarnation uuid)
        RETURNS TABLE(o_stream text, o_seq bigint) LANGUAGE plpgsql AS $$
        DECLARE i int; t turns%ROWTYPE; v_seq bigint; v_streams text[] := '{}'; v_prev bigint[] := '{}'; v_lasts bigint[] := '{}';
        BEGIN
          FOR i IN 1 .. coalesce(array_length(p_run, 1), 0) LOOP
            UPDATE turns SET state = p_state[i], ended_at = now()
            WHERE run_id = p_run[i] AND state = 1 AND incarnation = p_incarnation RETURNING * INTO t;
            IF NOT FOUND THEN RETURN QUERY SELECT NULL::text, NULL::bigint; CONTINUE; END IF;
            IF p_state[i] = 2 THEN
              v_seq := relay_take_seqs(t.stream_id, 1);
              INSERT INTO events (stream_id, seq, id, kind, conversation_id, role, content, run_id)
              VALUES (t.stream_id, v_seq, p_event[i], 0, t.conversation_id, 1, p_text[i], t.run_id);
              UPDATE messages SET state = 0, answer_event_id = p_event[i], ended_seq = v_seq WHERE run_id = t.run_id;
            ELSE
              v_seq := relay_end_turn(t.run_id, t.stream_id, t.conversation_id, p_text[i], p_state[i] = 4);
            END IF;
            v_streams := v_streams || t.stream_id; v_prev := v_prev || (v_seq - 1); v_lasts := v_lasts || v_seq;
            RETURN QUERY SELECT t.stream_id, v_seq;
          END LOOP;
          PERFORM relay_notify(v_streams, v_prev, v_lasts);
        END $$
        """

    /// Fails the running turns of a node incarnation as a restart fails them (a failure event at
    /// a fresh seq of their streams) and removes its row, so its heartbeat finds itself fenced.
    /// Every write is a predicate on that incarnation, so a stale caller is harmless.
    static let bury = """
        CREATE FUNCTION relay_bury_node(p_node text, p_incarnation uuid)
        RETURNS TABLE(o_run text, o_stream text, o_seq bigint) LANGUAGE plpgsql AS $$
        DECLARE t turns%ROWTYPE; v_seq bigint;
        BEGIN
          FOR t IN UPDATE turns SET state = 3, ended_at = now() WHERE incarnation = p_incarnation AND state = 1 RETURNING * LOOP
            v_seq := relay_end_turn(t.run_id, t.stream_id, t.conversation_id, 'the relay node stopped', false);
            RETURN QUERY SELECT t.run_id, t.stream_id, v_seq;
          END LOOP;
          DELETE FROM nodes WHERE node_id = p_node AND incarnation = p_incarnation;
        END $$
        """

    /// Declares dead, in one transaction, every node whose lease expired or whose advisory lock is
    /// gone (its control session ended), and buries it. One row per failed turn (o_run NULL for a
    /// dead node that ran none); the positions go out on `clawrelay_log`.
    static let sweep = """
        CREATE FUNCTION relay_sweep_nodes()
        RETURNS TABLE(o_node text, o_incarnation uuid, o_run text, o_stream text, o_seq bigint) LANGUAGE plpgsql AS $$
        DECLARE n record; b record; v_any boolean; v_streams text[] := '{}'; v_prev bigint[] := '{}'; v_lasts bigint[] := '{}';
        BEGIN
          FOR n IN SELECT node_id, incarnation FROM nodes WHERE expires_at < now() OR NOT EXISTS (
                     SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
                     AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                     AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtext('clawrelay-node:' || nodes.node_id)::bigint)
                   ORDER BY node_id FOR UPDATE SKIP LOCKED LOOP
            v_any := false;
            FOR b IN SELECT * FROM relay_bury_node(n.node_id, n.incarnation) LOOP
              v_streams := v_streams || b.o_stream; v_prev := v_prev || (b.o_seq - 1); v_lasts := v_lasts || b.o_seq;
              v_any := true;
              RETURN QUERY SELECT n.node_id, n.incarnation, b.o_run, b.o_stream, b.o_seq;
            END LOOP;
            IF NOT v_any THEN RETURN QUERY SELECT n.node_id, n.incarnation, NULL::text, NULL::text, NULL::bigint; END IF;
          END LOOP;
          PERFORM relay_notify(v_streams, v_prev, v_lasts);
        END $$
        """

    /// Registers a node incarnation with its lease; an earlier incarnation of the same node id (a
    /// restart: the caller holds the node's lock now, so the sweep would not see it dead) is
    /// buried first, in the same transaction. Returns the turns that buried.
    static let register = """
        CREATE FUNCTION relay_register_node(p_node text, p_incarnation uuid, p_lease_seconds double precision)
        RETURNS TABLE(o_run text, o_stream text, o_seq bigint) LANGUAGE plpgsql AS $$
        DECLARE v_old uuid; v_streams text[] := '{}'; v_prev bigint[] := '{}'; v_lasts bigint[] := '{}'; b record;
        BEGIN
          SELECT incarnation INTO v_old FROM nodes WHERE node_id = p_node FOR UPDATE;
          IF v_old IS NOT NULL AND v_old <> p_incarnation THEN
            FOR b IN SELECT * FROM relay_bury_node(p_node, v_old) LOOP
              v_streams := v_streams || b.o_stream; v_prev := v_prev || (b.o_seq - 1); v_lasts := v_lasts || b.o_seq;
              RETURN QUERY SELECT b.o_run, b.o_stream, b.o_seq;
            END LOOP;
          END IF;
          INSERT INTO nodes (node_id, incarnation, started_at, heartbeat_at, expires_at)
          VALUES (p_node, p_incarnation, now(), now(), now() + make_interval(secs => p_lease_seconds))
          ON CONFLICT (node_id) DO UPDATE SET incarnation = excluded.incarnation, started_at = now(), heartbeat_at = now(),
            expires_at = excluded.expires_at;
          PERFORM relay_notify(v_streams, v_prev, v_lasts);
        END $$
        """
}
