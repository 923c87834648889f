/// Why an id an operator typed names no single record.
public struct IDLookupError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(description: String) { self.description = description }
}

/// The one grammar for ids an operator types (every `clawrelay` command that takes a device or a
/// conversation id): a whole id, or a prefix of at least `minimumPrefix` characters (what
/// `clawrelay audit` prints) that starts exactly one id. Each store finds the candidates; this
/// picks among them, so both stores answer alike.
public enum OperatorID {
    public static let minimumPrefix = 8
    /// How many matches an ambiguous prefix names.
    public static let namedMatches = 5

    /// What an id names.
    public enum Kind: Sendable {
        /// Paired devices of every protocol and pending pairing requests.
        case device
        case conversation

        var noun: String { self == .device ? "device" : "conversation" }
        var listing: String { self == .device ? "clawrelay devices list" : "clawrelay conversations list" }
    }

    /// The whole id `given` names, from what the store found: whether `given` is itself an id,
    /// and the ids that sort right after it (at least `namedMatches + 1` of them when there are
    /// that many). An id no record has comes back as it was given (the command then says there
    /// is no such device or conversation); a prefix shorter than `minimumPrefix` characters, or
    /// one that starts several ids, is refused.
    public static func pick(_ given: String, as kind: Kind, isExact: Bool, following: [String]) throws -> String {
        if isExact { return given }
        guard given.count >= minimumPrefix else {
            throw IDLookupError(
                description:
                    "no \(kind.noun) has the id \(given), and a prefix needs at least \(minimumPrefix) characters (\(kind.listing) shows the ids)"
            )
        }
        let matches = following.prefix { $0.hasPrefix(given) }
        switch matches.count {
        case 0: return given
        case 1: return matches[matches.startIndex]
        default:
            let named = matches.prefix(namedMatches).joined(separator: ", ") + (matches.count > namedMatches ? ", …" : "")
            throw IDLookupError(description: "\(given) starts more than one \(kind.noun) id (\(named)); type more of it")
        }
    }
}
