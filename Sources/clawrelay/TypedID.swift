import RelayStore

/// Ids typed at the command line, read with the store's one grammar (`IDLookup`: a whole id, or a
/// unique prefix of 8 or more characters). Every command that takes a device or conversation id
/// resolves it here first; a refusal ends the command with its sentence.
enum TypedID {
    static func device(_ given: String, in store: Store) -> String { resolve(given, as: .device, in: store) }

    static func conversation(_ given: String, in store: Store) -> String { resolve(given, as: .conversation, in: store) }

    private static func resolve(_ given: String, as kind: IDLookup.Kind, in store: Store) -> String {
        do {
            return try store.read { db in try IDLookup.resolve(db, given, as: kind) }
        } catch {
            fail("\(error)")
        }
    }
}
