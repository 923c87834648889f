/// Migration 6: the journal's turn writes as one function call per batch (SCALE-OUT.md §4.4).
///
/// `relay_turn_writes` takes a batch of accepts, answers, failures and notes in submission order
/// (arguments as arrays, one element per write) and does each as `PostgresSchema.journal`
/// describes its rows; the batch is one statement, so one round trip and one transaction, with
/// one NOTIFY of every position it moved.
///
/// A queue entry now points at its event (`stream_id`, `seq`) instead of holding a copy: the batch
/// queues an event before its seq is known to the caller, and the log is the truth anyway. Entries
/// are read back through the log (`PostgresQueueQueries.pending`).
extension PostgresSchema {
    static let turnWrites = [
        "ALTER TABLE queue_entries DROP COLUMN item",
        notifyNamingTheSender,
        claimRunsWithoutSubtransactions,
        trimQueues,
        writeTurns,
    ]

    /// `relay_notify` of migration 1, each payload starting with the sending backend's PID (`@PID;`,
    /// `OwnBackends`): a node's listener leaves its own commits to its writer.
    static let notifyNamingTheSender = """
        CREATE OR REPLACE FUNCTION relay_notify(p_stream text[], p_prev bigint[], p_last bigint[])
        RETURNS void LANGUAGE plpgsql AS $$
        DECLARE r record; v_text text; v_payload text := ''; v_origin text := '@' || pg_backend_pid() || ';';
        BEGIN
          FOR r IN SELECT s, min(p) AS prev, max(l) AS last, min(o) AS first
                   FROM unnest(p_stream, p_prev, p_last) WITH ORDINALITY AS t(s, p, l, o) GROUP BY s ORDER BY first LOOP
            v_text := r.s || ':' || r.prev || ':' || r.last;
            IF v_payload <> '' AND octet_length(v_origin) + octet_length(v_payload) + 1 + octet_length(v_text) > 7900 THEN
              PERFORM pg_notify('clawrelay_log', v_origin || v_payload);
              v_payload := '';
            END IF;
            v_payload := CASE WHEN v_payload = '' THEN v_text ELSE v_payload || ';' || v_text END;
          END LOOP;
          IF v_payload <> '' THEN PERFORM pg_notify('clawrelay_log', v_origin || v_payload); END IF;
        END $$
        """

    /// `relay_claim_runs` of migration 2 without its subtransaction: the row it locked and then
    /// updated inside an `EXCEPTION` block became a MultiXact, and every later look at the
    /// conversation's turns paid for it (perf: `GetMultiXactIdMembers`, the cluster's writer at
    /// a millisecond a message). Two claimers of one conversation are kept apart by a
    /// transaction advisory lock on it instead (`turns_one_running` stays the backstop).
    static let claimRunsWithoutSubtransactions = """
        CREATE OR REPLACE FUNCTION relay_claim_runs(p_run text[], p_nodes text[], p_incarnations uuid[])
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
            -- One claimer of a conversation at a time (relay_turn_writes takes these locks first, in
            -- conversation order, so two batches never wait on each other in a cycle).
            PERFORM pg_advisory_xact_lock(hashtext('clawrelay-conversation:' || t.conversation_id));
            IF EXISTS (SELECT 1 FROM turns WHERE conversation_id = t.conversation_id AND state = 1)
               OR EXISTS (SELECT 1 FROM turns WHERE conversation_id = t.conversation_id AND state = 0 AND incarnation IS NOT NULL
                          AND order_seq < t.order_seq) THEN
              RETURN QUERY SELECT 1::smallint; CONTINUE;
            END IF;
            UPDATE turns SET state = 1, node_id = v_node, incarnation = v_incarnation, started_at = now() WHERE run_id = p_run[i];
            RETURN QUERY SELECT 0::smallint;
          END LOOP;
        END $$
        """

    /// Keeps each device's newest `p_capacity` queue entries (by seq, then id); the oldest go.
    static let trimQueues = """
        CREATE FUNCTION relay_trim_queues(p_device text[], p_capacity bigint[]) RETURNS void LANGUAGE sql AS $$
          DELETE FROM queue_entries q USING (
            SELECT id FROM (
              SELECT e.id, row_number() OVER (PARTITION BY e.device_id ORDER BY e.seq DESC, e.id DESC) AS n, t.c
              FROM queue_entries e
              JOIN (SELECT d, max(greatest(c, 0)) AS c FROM unnest(p_device, p_capacity) AS u(d, c) GROUP BY d) t ON e.device_id = t.d
            ) ranked WHERE n > c
          ) gone WHERE q.id = gone.id
        $$
        """

    /// The write kinds of `p_kind`: 0 accept, 1 answer, 2 failure (`p_state` the message's ended
    /// state), 3 note, 4 a cluster node's claim of a run (`relay_claim_runs`; `p_stream` '',
    /// `p_conversation` the run's), so a
    /// claim goes out with the answers and accepts queued beside it and sees what they wrote. Per
    /// write one row comes back, in order, `o_outcome`:
    /// - 0 stored: `o_seq` the event's seq (an accept's user event; `o_answer_seq` its answer slot);
    /// - 1 duplicate accept (the stored `o_state`, `o_run`, `o_answer_event`, `o_answer_seq`);
    /// - 2 mismatch (the client id was used for other content); 3 rejected (`p_rejected`: the
    ///   caller's own refusal, judged only after the duplicate check, as the SQLite store does);
    /// - 4 fenced: an answer or failure whose message exists and is no longer active (nothing
    ///   written); 5 an accept naming an asset the sender does not own (`o_event` the asset);
    /// - 6 a claim's answer, `o_state` `relay_claim_runs`'s code (0 running, 1 waiting, 2 ended,
    ///   3 the incarnation is not a live node).
    ///
    /// Accepts name their assets as (`p_asset_op`, `p_asset`) pairs and writes their queue targets
    /// as (`p_queue_op`, `p_queue_device`, `p_queue_ttl`, `p_queue_capacity`), `*_op` being the
    /// write's 1-based index. A device keeps its newest `capacity` entries.
    static let writeTurns = """
        CREATE FUNCTION relay_turn_writes(
          p_kind smallint[], p_stream text[], p_conversation text[], p_device text[], p_client text[], p_run text[],
          p_event text[], p_answer_event text[], p_content text[], p_content_hash text[], p_attachments text[],
          p_attachments_hash text[], p_sender text[], p_rejected boolean[], p_state smallint[], p_ms bigint[],
          p_node text[], p_incarnation text[], p_asset_op int[], p_asset text[],
          p_queue_op int[], p_queue_device text[], p_queue_ttl bigint[], p_queue_capacity bigint[])
        RETURNS TABLE(o_outcome smallint, o_state smallint, o_run text, o_event text, o_answer_event text, o_seq bigint,
          o_answer_seq bigint)
        LANGUAGE plpgsql AS $$
        DECLARE
          i int; j int; v_last bigint; v_state smallint; v_asset text; m messages%ROWTYPE;
          v_seqs bigint[] := '{}'; v_streams text[] := '{}'; v_prev bigint[] := '{}'; v_lasts bigint[] := '{}';
          v_clock text[]; v_clock_last bigint[]; v_clock_start bigint[]; v_conversation text;
        BEGIN
          -- The batch's stream clocks, locked once, in stream order (two batches never wait on each
          -- other in a cycle), counted here and written back once at the end.
          INSERT INTO streams (stream_id, last) SELECT DISTINCT s, 0 FROM unnest(p_stream) AS s WHERE s <> '' ON CONFLICT (stream_id) DO NOTHING;
          SELECT array_agg(stream_id ORDER BY stream_id), array_agg(last ORDER BY stream_id) INTO v_clock, v_clock_last
          FROM (SELECT stream_id, last FROM streams WHERE stream_id = ANY(p_stream) ORDER BY stream_id FOR UPDATE) locked;
          v_clock_start := v_clock_last;
          -- The conversations its claims are about, locked in conversation order (relay_claim_runs).
          FOR v_conversation IN SELECT DISTINCT p_conversation[k] FROM generate_subscripts(p_kind, 1) AS k WHERE p_kind[k] = 4 ORDER BY 1 LOOP
            PERFORM pg_advisory_xact_lock(hashtext('clawrelay-conversation:' || v_conversation));
          END LOOP;
          FOR i IN 1 .. coalesce(array_length(p_kind, 1), 0) LOOP
            j := array_position(v_clock, p_stream[i]);
            v_seqs[i] := NULL;
            o_outcome := 0; o_state := NULL; o_run := p_run[i]; o_event := p_event[i]; o_answer_event := NULL; o_seq := NULL;
            o_answer_seq := NULL;
            IF p_kind[i] = 4 THEN
              SELECT c.o_claim INTO v_state FROM relay_claim_runs(ARRAY[p_run[i]], ARRAY[p_node[i]], ARRAY[p_incarnation[i]::uuid]) AS c;
              o_outcome := 6; o_state := v_state; RETURN NEXT; CONTINUE;
            END IF;
            IF p_kind[i] = 0 THEN
              SELECT * INTO m FROM messages WHERE device_id = p_device[i] AND client_id = p_client[i];
              IF FOUND THEN
                IF m.content_hash = p_content_hash[i] AND m.attachments_hash = p_attachments_hash[i] THEN
                  o_outcome := 1; o_state := m.state; o_run := m.run_id; o_answer_event := m.answer_event_id;
                  o_answer_seq := m.answer_seq;
                ELSE
                  o_outcome := 2;
                END IF;
                RETURN NEXT; CONTINUE;
              END IF;
              IF p_rejected[i] THEN o_outcome := 3; RETURN NEXT; CONTINUE; END IF;
              SELECT t.a INTO v_asset FROM unnest(p_asset_op, p_asset) WITH ORDINALITY AS t(op, a, o)
              WHERE t.op = i AND NOT EXISTS (SELECT 1 FROM assets s WHERE s.id = t.a AND s.user_id = p_sender[i]) ORDER BY t.o LIMIT 1;
              IF v_asset IS NOT NULL THEN o_outcome := 5; o_event := v_asset; RETURN NEXT; CONTINUE; END IF;
              -- The message and its answer's slot: two consecutive seqs.
              v_clock_last[j] := v_clock_last[j] + 2; v_last := v_clock_last[j];
              INSERT INTO events (stream_id, seq, id, kind, conversation_id, role, content, device_id, attachments, run_id, created_ms)
              VALUES (p_stream[i], v_last - 1, p_event[i], 0, p_conversation[i], 0, p_content[i], p_device[i],
                NULLIF(p_attachments[i], ''), p_run[i], p_ms[i]);
              INSERT INTO messages (device_id, client_id, stream_id, conversation_id, run_id, content_hash, attachments_hash, state,
                user_event_id, answer_event_id, answer_seq, created_ms)
              VALUES (p_device[i], p_client[i], p_stream[i], p_conversation[i], p_run[i], p_content_hash[i], p_attachments_hash[i], 1,
                p_event[i], p_answer_event[i], v_last, p_ms[i]);
              -- One's own message is never unread.
              INSERT INTO read_cursors (user_id, conversation_id, seq, updated_ms) VALUES (p_sender[i], p_conversation[i], v_last - 1, p_ms[i])
              ON CONFLICT (user_id, conversation_id) DO UPDATE SET seq = excluded.seq, updated_ms = excluded.updated_ms
              WHERE read_cursors.seq < excluded.seq;
              IF p_node[i] <> '' THEN
                INSERT INTO turns (run_id, conversation_id, stream_id, order_seq, backend, device_id, client_id, state, node_id, incarnation)
                VALUES (p_run[i], p_conversation[i], p_stream[i], v_last - 1, '', p_device[i], p_client[i], 0, p_node[i],
                  p_incarnation[i]::uuid);
              END IF;
              o_state := 1; o_answer_event := p_answer_event[i]; o_seq := v_last - 1; o_answer_seq := v_last;
              v_seqs[i] := v_last - 1;
              v_streams := v_streams || p_stream[i]; v_prev := v_prev || (v_last - 2); v_lasts := v_lasts || v_last;
              RETURN NEXT; CONTINUE;
            END IF;
            IF p_kind[i] IN (1, 2) THEN
              SELECT state INTO v_state FROM messages WHERE device_id = p_device[i] AND client_id = p_client[i] FOR UPDATE;
              IF FOUND AND v_state <> 1 THEN o_outcome := 4; RETURN NEXT; CONTINUE; END IF;
            END IF;
            v_clock_last[j] := v_clock_last[j] + 1; v_last := v_clock_last[j];
            IF p_kind[i] = 1 THEN
              INSERT INTO events (stream_id, seq, id, kind, conversation_id, role, content, run_id, created_ms)
              VALUES (p_stream[i], v_last, p_event[i], 0, p_conversation[i], 1, p_content[i], p_run[i], p_ms[i]);
              UPDATE messages SET state = 0, answer_event_id = p_event[i] WHERE device_id = p_device[i] AND client_id = p_client[i];
              DELETE FROM turns WHERE run_id = p_run[i];
            ELSIF p_kind[i] = 2 THEN
              INSERT INTO events (stream_id, seq, id, kind, conversation_id, content, run_id, created_ms)
              VALUES (p_stream[i], v_last, p_event[i], 1, p_conversation[i], p_content[i], p_run[i], p_ms[i]);
              UPDATE messages SET state = p_state[i], reason = p_content[i], ended_seq = v_last, ended_ms = p_ms[i],
                answer_event_id = coalesce(NULLIF(p_answer_event[i], ''), answer_event_id)
              WHERE device_id = p_device[i] AND client_id = p_client[i];
              UPDATE conversations SET updated_ms = p_ms[i] WHERE id = p_conversation[i];
              DELETE FROM turns WHERE run_id = p_run[i];
            ELSE
              INSERT INTO events (stream_id, seq, id, kind, conversation_id, role, content, created_ms)
              VALUES (p_stream[i], v_last, p_event[i], 0, p_conversation[i], 2, p_content[i], p_ms[i]);
            END IF;
            o_seq := v_last; v_seqs[i] := v_last;
            v_streams := v_streams || p_stream[i]; v_prev := v_prev || (v_last - 1); v_lasts := v_lasts || v_last;
            RETURN NEXT;
          END LOOP;
          UPDATE streams s SET last = c.last FROM unnest(v_clock, v_clock_last, v_clock_start) AS c(id, last, start)
          WHERE s.stream_id = c.id AND c.last <> c.start;
          IF coalesce(array_length(p_queue_op, 1), 0) > 0 THEN
            INSERT INTO queue_entries (device_id, stream_id, seq, conversation_id, queued_ms, expires_ms)
            SELECT q.d, p_stream[q.op], v_seqs[q.op], p_conversation[q.op], p_ms[q.op], p_ms[q.op] + greatest(q.ttl, 0)
            FROM unnest(p_queue_op, p_queue_device, p_queue_ttl) WITH ORDINALITY AS q(op, d, ttl, o)
            WHERE v_seqs[q.op] IS NOT NULL ORDER BY q.o;
            PERFORM relay_trim_queues(p_queue_device, p_queue_capacity);
          END IF;
          PERFORM relay_notify(v_streams, v_prev, v_lasts);
        END $$
        """
}
