/// The PL/pgSQL functions behind the writer's batches: one call per batch, so a batch costs one
/// round trip (postgres-nio does not pipeline), and one NOTIFY per payload inside it.
extension PostgresSchema {
    static let functions = [notify, takeSeqs, endTurn, accept, claim, end, bury, sweep, register]

    /// Announces the positions `(prev, last]` merged per stream (first appearance order) on
    /// `clawrelay_log`, split like `StreamPosition.payloads` (pieces of at most 7,900 bytes).
    static let notify = """
        CREATE FUNCTION relay_notify(p_stream text[], p_prev bigint[], p_last bigint[])
        RETURNS void LANGUAGE plpgsql AS $$
        DECLARE r record; v_text text; v_payload text := '';
        BEGIN
          FOR r IN SELECT s, min(p) AS prev, max(l) AS last, min(o) AS first
                   FROM unnest(p_stream, p_prev, p_last) WITH ORDINALITY AS t(s, p, l, o) GROUP BY s ORDER BY first LOOP
            v_text := r.s || ':' || r.prev || ':' || r.last;
            IF v_payload <> '' AND octet_length(v_payload) + 1 + octet_length(v_text) > 7900 THEN
              PERFORM pg_notify('clawrelay_log', v_payload);
              v_payload := '';
            END IF;
            v_payload := CASE WHEN v_payload = '' THEN v_text ELSE v_payload || ';' || v_text END;
          END LOOP;
          IF v_payload <> '' THEN PERFORM pg_notify('clawrelay_log', v_payload); END IF;
        END $$
        """

    /// Takes `n` seqs of a stream's clock (created at 0); returns the new last. The row lock it
    /// takes makes seq order commit order.
    static let takeSeqs = """
        CREATE FUNCTION relay_take_seqs(p_stream text, n int) RETURNS bigint LANGUAGE sql AS $$
          INSERT INTO streams (stream_id, last) VALUES (p_stream, n)
          ON CONFLICT (stream_id) DO UPDATE SET last = streams.last + n RETURNING last
        $$
        """

    /// Ends a turn the caller has already moved out of `running`: a failure event at a fresh seq of
    /// its stream and the message record. Returns the event's seq.
    static let endTurn = """
        CREATE FUNCTION relay_end_turn(p_run text, p_stream text, p_conversation text, p_reason text, p_aborted boolean)
        RETURNS bigint LANGUAGE plpgsql AS $$
        DECLARE v_seq bigint;
        BEGIN
          v_seq := relay_take_seqs(p_stream, 1);
          INSERT INTO events (stream_id, seq, id, kind, conversation_id, content, run_id)
          VALUES (p_stream, v_seq, 'f_' || p_run, 1, p_conversation, p_reason, p_run);
          UPDATE messages SET state = CASE WHEN p_aborted THEN 3 ELSE 2 END, reason = p_reason, ended_seq = v_seq
          WHERE run_id = p_run;
          RETURN v_seq;
        END $$
        """

    /// Accepts messages idempotently per (device, client id): outcome 0 fresh (user event, answer
    /// slot, queued turn), 1 duplicate (the stored state), 2 mismatch (other content).
    static let accept = """
        CREATE FUNCTION relay_accept_batch(
          p_stream text[], p_conversation text[], p_device text[], p_client text[], p_run text[], p_user_event text[],
          p_answer_event text[], p_content text[], p_content_hash text[], p_attachments text[], p_attachments_hash text[],
          p_backend text[])
        RETURNS TABLE(o_outcome smallint, o_state smallint, o_run text, o_user_event text, o_answer_event text, o_seq bigint,
          o_answer_seq bigint)
        LANGUAGE plpgsql AS $$
        DECLARE i int; v_last bigint; m messages%ROWTYPE; v_streams text[] := '{}'; v_prev bigint[] := '{}'; v_lasts bigint[] := '{}';
        BEGIN
          FOR i IN 1 .. coalesce(array_length(p_stream, 1), 0) LOOP
            INSERT INTO messages (device_id, client_id, stream_id, conversation_id, run_id, content_hash, attachments_hash, state,
              user_event_id, answer_event_id)
            VALUES (p_device[i], p_client[i], p_stream[i], p_conversation[i], p_run[i], p_content_hash[i], p_attachments_hash[i], 1,
              p_user_event[i], p_answer_event[i])
            ON CONFLICT (device_id, client_id) DO NOTHING;
            IF NOT FOUND THEN
              SELECT * INTO m FROM messages WHERE device_id = p_device[i] AND client_id = p_client[i];
              IF m.content_hash = p_content_hash[i] AND m.attachments_hash = p_attachments_hash[i] THEN
                RETURN QUERY SELECT 1::smallint, m.state, m.run_id, m.user_event_id, m.answer_event_id, m.answer_seq - 1, m.answer_seq;
              ELSE
                RETURN QUERY SELECT 2::smallint, NULL::smallint, NULL::text, NULL::text, NULL::text, NULL::bigint, NULL::bigint;
              END IF;
              CONTINUE;
            END IF;
            v_last := relay_take_seqs(p_stream[i], 2);
            INSERT INTO events (stream_id, seq, id, kind, conversation_id, role, content, device_id, attachments, run_id)
            VALUES (p_stream[i], v_last - 1, p_user_event[i], 0, p_conversation[i], 0, p_content[i], p_device[i],
              NULLIF(p_attachments[i], '')::jsonb, p_run[i]);
            UPDATE messages SET answer_seq = v_last WHERE device_id = p_device[i] AND client_id = p_client[i];
            INSERT INTO turns (run_id, conversation_id, stream_id, order_seq, backend, device_id, client_id, state)
            VALUES (p_run[i], p_conversation[i], p_stream[i], v_last - 1, p_backend[i], p_device[i], p_client[i], 0);
            v_streams := v_streams || p_stream[i]; v_prev := v_prev || (v_last - 2); v_lasts := v_lasts || v_last;
            RETURN QUERY SELECT 0::smallint, 1::smallint, p_run[i], p_user_event[i], p_answer_event[i], v_last - 1, v_last;
          END LOOP;
          PERFORM relay_notify(v_streams, v_prev, v_lasts);
        END $$
        """
}
