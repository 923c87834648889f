/// Migration 11: the pending pushes every node of a cluster stores are shared (SCALE-OUT.md §4.7),
/// a read moves its cursor in one call (`relay_mark_read`), and an accept no longer moves its
/// sender's read cursor (every reader of cursors counts the user's own newest message as read).
///
/// A push can be claimed (`claimed_by`, the claiming incarnation, until `claimed_until_ms`): the
/// node whose timer fires first for a device and conversation claims every push of that pair no
/// live node holds (`relay_claim_pushes`), sends them as one and deletes what it claimed. A claim
/// by a node that is not live, or one past its time, is free again; storing a push drops its claim.
extension PostgresSchema {
    static let pushClaims = [
        "ALTER TABLE push_pending ADD COLUMN claimed_by uuid, ADD COLUMN claimed_until_ms bigint",
        "CREATE INDEX push_pending_burst ON push_pending (device_id, conversation_id)",
        """
        CREATE FUNCTION relay_push_free(p_by uuid, p_until bigint, p_now bigint) RETURNS boolean LANGUAGE sql STABLE AS $$
          SELECT p_by IS NULL OR p_until < p_now OR NOT EXISTS (SELECT 1 FROM nodes WHERE incarnation = p_by AND expires_at >= now())
        $$
        """,
        claimPushes,
        markRead,
        writeTurnsLeavingReadsToTheReaders,
    ]

    /// Claims a device's burst in a conversation for a live node: the pushes no live node holds
    /// (rows another claimer has locked are skipped: they are being claimed); a node that is not
    /// live claims nothing. Reads cancel pushes where they happen (each node drops its own when it
    /// hears of the read), as on a relay on its own: a read cursor moved by the user's own message
    /// is no read of the answers before it.
    static let claimPushes = """
        CREATE FUNCTION relay_claim_pushes(p_device text, p_conversation text, p_node text, p_incarnation uuid, p_now bigint, p_until bigint)
        RETURNS SETOF push_pending LANGUAGE plpgsql AS $$
        BEGIN
          IF NOT EXISTS (SELECT 1 FROM nodes WHERE node_id = p_node AND incarnation = p_incarnation AND expires_at >= now()) THEN RETURN; END IF;
          RETURN QUERY
          WITH burst AS (
            SELECT id FROM push_pending
            WHERE device_id = p_device AND conversation_id = p_conversation AND relay_push_free(claimed_by, claimed_until_ms, p_now)
            ORDER BY id FOR UPDATE SKIP LOCKED)
          UPDATE push_pending p SET claimed_by = p_incarnation, claimed_until_ms = p_until FROM burst WHERE p.id = burst.id RETURNING p.*;
        END $$
        """

    /// `PostgresReadCursorQueries.markRead` as one statement (it was four round trips, each its own
    /// transaction, on the writer's connection: a foreground device's shown reads cost more
    /// statements than the messages they read). Moves the user's cursor forward to `p_seq`,
    /// clamped to the conversation's newest message event; when the user's cursor (the stored row,
    /// or the user's own newest message after it: sending counts as reading) is there already, the
    /// row only catches up with it. Returns the cursor when it moved to `p_seq`'s target, no row
    /// otherwise.
    static let markRead = """
        CREATE FUNCTION relay_mark_read(p_user text, p_conversation text, p_seq bigint, p_ms bigint)
        RETURNS TABLE(o_seq bigint, o_ms bigint) LANGUAGE plpgsql AS $$
        DECLARE v_target bigint; v_seq bigint; v_ms bigint; v_sent bigint; v_sent_ms bigint;
        BEGIN
          SELECT least(p_seq, coalesce(max(seq), 0)) INTO v_target FROM events WHERE conversation_id = p_conversation AND kind = 0;
          SELECT seq, updated_ms INTO v_seq, v_ms FROM read_cursors WHERE user_id = p_user AND conversation_id = p_conversation;
          SELECT seq, created_ms INTO v_sent, v_sent_ms FROM events
          WHERE conversation_id = p_conversation AND stream_id = p_user AND kind = 0 AND role = 0 AND seq > coalesce(v_seq, 0)
          ORDER BY seq DESC LIMIT 1;
          IF v_sent IS NOT NULL THEN v_seq := v_sent; v_ms := v_sent_ms; END IF;
          IF v_seq IS NOT NULL AND v_seq >= v_target THEN
            v_target := v_seq; p_ms := v_ms;
          END IF;
          IF v_target <= 0 THEN RETURN; END IF;
          INSERT INTO read_cursors AS r (user_id, conversation_id, seq, updated_ms) VALUES (p_user, p_conversation, v_target, p_ms)
          ON CONFLICT (user_id, conversation_id) DO UPDATE SET seq = excluded.seq, updated_ms = excluded.updated_ms WHERE excluded.seq > r.seq;
          IF FOUND AND v_target <> coalesce(v_seq, -1) THEN RETURN QUERY SELECT v_target, p_ms; END IF;
        END $$
        """

    /// `relay_turn_writes` of migration 7 without the accept's upsert of its sender's read cursor:
    /// `relay_mark_read` and the conversation summaries take the user's own newest message as
    /// read wherever the row trails it, so the upsert (a row version per message) bought nothing.
    static let writeTurnsLeavingReadsToTheReaders: String = {
        var text = writeTurnsKeepingTheBackend.replacingOccurrences(
            of: "CREATE FUNCTION relay_turn_writes(",
            with: "CREATE OR REPLACE FUNCTION relay_turn_writes("
        )
        if let start = text.range(of: "-- One's own message is never unread."),
            let end = text.range(of: "WHERE read_cursors.seq < excluded.seq;", range: start.upperBound..<text.endIndex)
        {
            text.removeSubrange(start.lowerBound..<end.upperBound)
        }
        return text
    }()
}
