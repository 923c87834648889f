import Foundation

/// How the user wants one conversation answered and shown, set from any protocol (the gateway's
/// `sessions.patch`, `/think`) and kept with the conversation. Backends that understand a setting
/// get it with each turn (`TurnRequest.settings`); the others ignore it.
public struct ConversationSettings: Sendable, Equatable, Codable {
    /// A fast-mode choice, as OpenClaw names them (`true`, `false`, `"auto"`).
    public enum FastMode: String, Sendable, Equatable, Codable {
        case on, off, auto
    }

    /// How hard the model thinks (`ThinkingLevel`'s canonical names); nil: the backend's default.
    public var thinkingLevel: String?
    public var fastMode: FastMode?
    /// How much of a run the user wants to see (`off`, `on`, `full`, …); nil: the default.
    public var verboseLevel: String?
    /// The user's own group for the conversation (OpenClaw's `category`).
    public var category: String?
    /// Pinned to the top of lists.
    public var pinned = false
    /// When it was pinned (nil while it is not).
    public var pinnedAt: Int64?
    /// The user marked it unread (besides the unread answers the read cursor counts).
    public var markedUnread = false

    public init() {}

    /// Reads what was stored, whichever of its fields a version wrote (a field added later is absent
    /// from older rows).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        thinkingLevel = try container.decodeIfPresent(String.self, forKey: .thinkingLevel)
        fastMode = try container.decodeIfPresent(FastMode.self, forKey: .fastMode)
        verboseLevel = try container.decodeIfPresent(String.self, forKey: .verboseLevel)
        category = try container.decodeIfPresent(String.self, forKey: .category)
        pinned = try container.decodeIfPresent(Bool.self, forKey: .pinned) ?? false
        pinnedAt = try container.decodeIfPresent(Int64.self, forKey: .pinnedAt)
        markedUnread = try container.decodeIfPresent(Bool.self, forKey: .markedUnread) ?? false
    }

    /// Nothing set: what a conversation has until the user chooses.
    public var isDefault: Bool { self == ConversationSettings() }
}

/// OpenClaw's thinking levels and the words its clients and `/think` accept for them.
public enum ThinkingLevel {
    /// The canonical names, from none to most.
    public static let all = ["off", "minimal", "low", "medium", "high", "adaptive", "xhigh", "max"]

    /// The canonical level `text` names (case, blanks, `-` and `_` do not matter), nil for none.
    public static func canonical(_ text: String) -> String? {
        let key = text.trimmingCharacters(in: .whitespaces).lowercased()
        let collapsed = String(key.filter { $0 != " " && $0 != "-" && $0 != "_" })
        if all.contains(collapsed) { return collapsed }
        switch collapsed {
        case "auto": return "adaptive"
        case "extrahigh": return "xhigh"
        case "none": return "off"
        case "on", "enable", "enabled", "thinkhard": return "low"
        case "min", "think": return "minimal"
        case "mid", "med", "thinkharder", "harder": return "medium"
        case "ultra", "ultrathink", "thinkhardest", "highest": return "high"
        default: return nil
        }
    }
}

extension ConversationSettings {
    /// OpenClaw's verbose levels.
    public static let verboseLevels = ["off", "on", "full"]

    /// The verbose level `text` names (case does not matter), nil for none.
    public static func verboseLevel(_ text: String) -> String? {
        let key = text.trimmingCharacters(in: .whitespaces).lowercased()
        return verboseLevels.contains(key) ? key : nil
    }
}
