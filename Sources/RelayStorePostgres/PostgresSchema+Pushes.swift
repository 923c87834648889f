/// Migration 11: the pending pushes every node of a cluster stores are shared (SCALE-OUT.md §4.7).
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
}
