import RelayKit

/// Attachments as the app decodes them: every one with an `id` (unique within its message, the
/// same in every replay: `<event id>-<index>`) next to the documented fields, and only the types
/// the app knows (`image`, `asset`, `document`). The app decodes a message all-or-nothing, so
/// one attachment it cannot read would drop the whole message.
public enum AttachmentWire {
    public static let knownTypes: Set<String> = ["image", "asset", "document"]

    /// The `attachments` JSON for the event `eventID`, from the stored form.
    public static func json(_ stored: String?, eventID: String) -> String {
        let wire = items(stored, eventID: eventID)
        return wire.isEmpty ? "[]" : JSONValue.array(wire).encoded()
    }

    /// The same, as values.
    public static func items(_ stored: String?, eventID: String) -> [JSONValue] {
        guard let stored, case .array(let items)? = JSONValue.parse(stored) else { return [] }
        return items.enumerated().map { index, item -> JSONValue in
            var fields = item.objectValue ?? [:]
            fields["id"] = .string("\(eventID)-\(index)")
            // Stored before the input rules refused other types: shown as a document the app can list.
            if !knownTypes.contains(fields["type"]?.stringValue ?? "") { fields["type"] = .string("document") }
            return .object(fields)
        }
    }
}
