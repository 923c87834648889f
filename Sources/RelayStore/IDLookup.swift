import GRDB
import RelayCore

/// Ids an operator typed, looked up in SQLite with `OperatorID`'s grammar.
public enum IDLookup {
    public typealias Kind = OperatorID.Kind

    /// The whole id `given` names (`OperatorID.pick`).
    public static func resolve(_ db: Database, _ given: String, as kind: Kind) throws -> String {
        let exact = try String.fetchOne(db, sql: "SELECT id FROM (\(kind.idsSQL)) WHERE id = ?", arguments: [given])
        guard exact == nil, given.count >= OperatorID.minimumPrefix else {
            return try OperatorID.pick(given, as: kind, isExact: exact != nil, following: [])
        }
        // Ids that start with `given` sort right after it.
        let following = try String.fetchAll(
            db,
            sql: "SELECT id FROM (\(kind.idsSQL)) WHERE id > ? ORDER BY id LIMIT ?",
            arguments: [given, OperatorID.namedMatches + 1]
        )
        return try OperatorID.pick(given, as: kind, isExact: false, following: following)
    }

    /// A filter on `column` for what the operator typed: the whole id, or (from `minimumPrefix`
    /// characters) the ids it starts. For listings of what happened (the audit, push attempts),
    /// which name devices that may no longer exist.
    static func filter(column: String, _ given: String) -> (sql: String, arguments: StatementArguments) {
        guard given.count >= OperatorID.minimumPrefix else { return ("\(column) = ?", [given]) }
        return ("substr(\(column), 1, ?) = ?", [given.unicodeScalars.count, given])
    }
}

extension OperatorID.Kind {
    /// Every id of this kind, from all the tables that hold one.
    var idsSQL: String {
        switch self {
        case .device: "SELECT id FROM devices UNION SELECT device_id FROM pending_pairings"
        case .conversation: "SELECT id FROM conversations"
        }
    }
}
