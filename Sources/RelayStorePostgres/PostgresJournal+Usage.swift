import RelayCore

extension PostgresJournal: UsageJournal {
    public func saveTurnReport(_ record: TurnReportRecord) {
        background("store a run's report") { connection, logger in try await PostgresUsageQueries.saveReport(connection, record, logger: logger) }
    }

    public func saveApproval(_ record: ApprovalRecord) {
        background("store an approval") { connection, logger in try await PostgresUsageQueries.saveApproval(connection, record, logger: logger) }
    }

    public func cancelStaleApprovals(now: Int64) {
        background("cancel approvals a previous run left pending") { connection, logger in
            try await PostgresUsageQueries.cancelStaleApprovals(connection, at: now, logger: logger)
        }
    }
}
