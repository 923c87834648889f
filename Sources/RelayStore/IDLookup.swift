import GRDB

/// Why an id an operator typed names no single record.
public struct IDLookupError: Error, Sendable, CustomStringConvertible {
    public let description: String
}

/// The one grammar for ids an operator types (every `clawrelay` command that takes a device or a
/// conversation id): a whole id, or a prefix of at least `minimumPrefix` characters (what
/// `clawrelay audit` prints) that starts exactly one id.
public enum IDLookup {
    public static let minimumPrefix = 8
    /// How many matches an ambiguous prefix names.
    static let namedMatches = 5

    /// What an id names.
    public enum Kind: Sendable {
        /// Paired devices of every protocol and pending pairing requests.
        case device
        case conversation

        var noun: String { self == .device ? "device" : "conversation" }
        var listing: String { self == .device ? "clawrelay devices list" : "clawrelay conversations list" }
        /// Every id of this kind, from all the tables that hold one.
        var idsSQL: String {
            switch self {
            case .device: "SELECT id FROM devices UNION SELECT device_id FROM pending_pairings"
            case .conversation: "SELECT id FROM conversations"
            }
        }
    }

    /// The whole id `given` names. An id no record has comes back as it was given (the command
    /// then says there is no such device or conversation); a prefix shorter than
    /// `minimumPrefix` characters, or one that starts several ids, is refused.
    public static func resolve(_ db: Database, _ given: String, as kind: Kind) throws -> String {
        let exact = try String.fetchOne(db, sql: "SELECT id FROM (\(kind.idsSQL)) WHERE id = ?", arguments: [given])
        if let exact { return exact }
        guard given.count >= minimumPrefix else {
            throw IDLookupError(
                description:
                    "no \(kind.noun) has the id \(given), and a prefix needs at least \(minimumPrefix) characters (\(kind.listing) shows the ids)"
            )
        }
        // Ids that start with `given` sort right after it.
        let matches = try String.fetchAll(
            db,
            sql: "SELECT id FROM (\(kind.idsSQL)) WHERE id > ? ORDER BY id LIMIT ?",
            arguments: [given, namedMatches + 1]
        ).prefix { $0.hasPrefix(given) }
        switch matches.count {
        case 0: return given
        case 1: return matches[matches.startIndex]
        default:
            let named = matches.prefix(namedMatches).joined(separator: ", ") + (matches.count > namedMatches ? ", …" : "")
            throw IDLookupError(description: "\(given) starts more than one \(kind.noun) id (\(named)); type more of it")
        }
    }

    /// A filter on `column` for what the operator typed: the whole id, or (from `minimumPrefix`
    /// characters) the ids it starts. For listings of what happened (the audit, push attempts),
    /// which name devices that may no longer exist.
    static func filter(column: String, _ given: String) -> (sql: String, arguments: StatementArguments) {
        guard given.count >= minimumPrefix else { return ("\(column) = ?", [given]) }
        return ("substr(\(column), 1, ?) = ?", [given.unicodeScalars.count, given])
    }
}
