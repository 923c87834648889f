import RelayCore

/// Ids typed at the command line, read with the stores' one grammar (`OperatorID`: a whole id, or
/// a unique prefix of 8 or more characters). Every command that takes a device or conversation id
/// resolves it here first; a refusal ends the command with its sentence.
enum TypedID {
    static func device(_ given: String, in store: any OperatorStore) -> String { resolve(given, as: .device, in: store) }

    static func conversation(_ given: String, in store: any OperatorStore) -> String { resolve(given, as: .conversation, in: store) }

    private static func resolve(_ given: String, as kind: OperatorID.Kind, in store: any OperatorStore) -> String {
        do {
            return try store.resolve(given, as: kind)
        } catch {
            fail("\(error)")
        }
    }
}
