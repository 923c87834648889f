/// Migration 12: a node no longer configured with an account (a reload dropped it) lets its
/// lease go at its next heartbeat, so another node configured with it takes it then, not after
/// this node restarts. (11 is kept for pushes.)
extension PostgresSchema {
    static let accountRelease = [releasingHoldAccounts]

    /// `relay_hold_accounts` of migration 7 that first deletes the caller's leases of accounts
    /// not in `p_accounts` (only its own incarnation's: another node's lease is never touched).
    static let releasingHoldAccounts =
        holdAccounts
        .replacingOccurrences(of: "CREATE FUNCTION relay_hold_accounts", with: "CREATE OR REPLACE FUNCTION relay_hold_accounts")
        .replacingOccurrences(
            of: "  IF p_take AND EXISTS",
            with:
                "  DELETE FROM account_leases WHERE incarnation = p_incarnation AND account <> ALL(coalesce(p_accounts, '{}'));\n  IF p_take AND EXISTS"
        )
}
