import GRDB

/// Hot-path SQL through GRDB's statement cache: each statement is prepared once per connection.
extension Database {
    func run(_ sql: String, _ arguments: StatementArguments = []) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }

    func row(_ sql: String, _ arguments: StatementArguments = []) throws -> Row? {
        try Row.fetchOne(cachedStatement(sql: sql), arguments: arguments)
    }

    func rows(_ sql: String, _ arguments: StatementArguments = []) throws -> [Row] {
        try Row.fetchAll(cachedStatement(sql: sql), arguments: arguments)
    }

    func value<T: DatabaseValueConvertible & StatementColumnConvertible>(
        _ type: T.Type,
        _ sql: String,
        _ arguments: StatementArguments = []
    ) throws -> T? {
        try T.fetchOne(cachedStatement(sql: sql), arguments: arguments)
    }
}
