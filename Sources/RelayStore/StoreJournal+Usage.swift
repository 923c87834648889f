import RelayCore

extension StoreJournal: UsageJournal {
    public func saveTurnReport(_ record: TurnReportRecord) {
        background("store a run's report") { db in try UsageQueries.saveReport(db, record) }
    }

    public func saveApproval(_ record: ApprovalRecord) {
        background("store an approval") { db in try UsageQueries.saveApproval(db, record) }
    }

    public func cancelStaleApprovals(now: Int64) {
        background("cancel approvals a previous run left pending") { db in try UsageQueries.cancelStaleApprovals(db, at: now) }
    }
}
