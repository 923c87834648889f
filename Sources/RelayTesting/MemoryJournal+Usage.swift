import RelayCore

extension MemoryJournal: UsageJournal {
    public func saveTurnReport(_ record: TurnReportRecord) { turnReports[record.runID] = record }

    public func saveApproval(_ record: ApprovalRecord) { approvals[record.approval.id] = record }

    public func cancelStaleApprovals(now: Int64) {
        for (id, record) in approvals where record.resolution == nil {
            approvals[id]?.resolution = ApprovalResolution(decision: .deny, cause: .cancelled, by: .relay, at: now)
        }
    }
}
