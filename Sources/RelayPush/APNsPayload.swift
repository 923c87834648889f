import RelayCore

/// An APNs alert payload that always fits Apple's 4,096-byte limit: the body text is shortened
/// (on a character boundary, with an ellipsis), never the JSON.
public enum APNsPayload {
    public static let maxBytes = 4_096

    /// `{aps: {alert: {title, body}, sound, thread-id}, …custom}`; nil when even an empty body
    /// would not fit (the custom fields are too large).
    public static func alert(
        title: String,
        body: String,
        threadID: String?,
        subtitle: String? = nil,
        category: String? = nil,
        wakesApp: Bool = false,
        custom: [String: JSONValue] = [:]
    ) -> String? {
        func encode(_ text: String) -> String {
            var alert: [String: JSONValue] = ["title": .string(title), "body": .string(text)]
            if let subtitle { alert["subtitle"] = .string(subtitle) }
            var aps: [String: JSONValue] = ["alert": .object(alert), "sound": .string("default")]
            if let threadID { aps["thread-id"] = .string(threadID) }
            if let category { aps["category"] = .string(category) }
            if wakesApp { aps["content-available"] = .int(1) }
            var root = custom
            root["aps"] = .object(aps)
            return JSONValue.object(root).encoded()
        }
        let whole = encode(body)
        if whole.utf8.count <= maxBytes { return whole }
        guard encode("…").utf8.count <= maxBytes else { return nil }
        // Binary search on characters: the longest prefix whose payload still fits.
        let characters = Array(body)
        var (low, high) = (0, characters.count)
        while low < high {
            let middle = (low + high + 1) / 2
            if encode(String(characters[..<middle]) + "…").utf8.count <= maxBytes { low = middle } else { high = middle - 1 }
        }
        return encode(String(characters[..<low]) + "…")
    }

    /// `{aps: {content-available: 1}, …custom}`: wakes the app without an alert; nil when too large.
    public static func background(custom: [String: JSONValue]) -> String? {
        var root = custom
        root["aps"] = .object(["content-available": .int(1)])
        let payload = JSONValue.object(root).encoded()
        return payload.utf8.count <= maxBytes ? payload : nil
    }
}
