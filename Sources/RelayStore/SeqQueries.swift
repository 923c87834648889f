import GRDB

/// The per-user clock every synced row takes its seq from.
///
/// Every seq taken is stored in the row that took it (an event, the answer slot after a user
/// event, a turn that ended without an answer, a conversation change), so a clock is recovered as
/// the highest of those. The store writer keeps each user's clock in memory from there
/// (`WriterStatements.clocks`) and writes nothing for it: `user_seqs` was a page of every commit.
/// The row stays the floor that everyone else raises (other connections, and a delete, which
/// takes rows away from the recovery), and the writer reads it at each take.
public enum SeqQueries {
    /// Takes `count` consecutive seqs of `userID`'s clock and returns the first.
    public static func next(_ db: Database, userID: String, count: Int64 = 1) throws -> Int64 {
        try next(WriterStatements(db), userID: userID, count: count)
    }

    static func next(_ statements: WriterStatements, userID: String, count: Int64 = 1) throws -> Int64 {
        let last = try current(statements, userID: userID)
        if statements.keepsClocks {
            statements.clocks[userID] = last + count
        } else {
            try raiseFloor(statements, userID: userID, to: last + count)
        }
        return last + 1
    }

    /// The last seq taken from `userID`'s clock (0 for a new one).
    static func current(_ statements: WriterStatements, userID: String) throws -> Int64 {
        let floor = try statements.int64(.seqLast) { $0.bind(1, userID) } ?? 0
        if statements.keepsClocks, let known = statements.clocks[userID] { return max(known, floor) }
        return max(floor, try statements.int64(.seqRecover) { $0.bind(1, userID) } ?? 0)
    }

    /// Writes the clock to its row, for a delete that is about to take rows away from the recovery.
    static func persist(_ db: Database, userID: String) throws {
        let statements = WriterStatements(db)
        try raiseFloor(statements, userID: userID, to: try current(statements, userID: userID))
    }

    private static func raiseFloor(_ statements: WriterStatements, userID: String, to last: Int64) throws {
        try statements.run(.seqRaise) {
            $0.bind(1, userID)
            $0.bind(2, last)
        }
    }
}
