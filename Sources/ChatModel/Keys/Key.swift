/// One key press (or one bracketed paste) decoded from terminal input by ``KeyDecoder``.
///
/// Control letters arrive as `.character` in lower case with ``Modifiers/control`` (Ctrl-A is
/// `Key.control("a")`); Alt (Meta, or ESC before a key) adds ``Modifiers/alt``.
public struct Key: Hashable, Sendable, CustomStringConvertible {
    public enum Code: Hashable, Sendable {
        /// A printable character, or the letter of a Ctrl-letter key.
        case character(Character)
        case enter, tab, backspace, delete, insert, escape
        case up, down, left, right, home, end, pageUp, pageDown
        /// F1…F12.
        case function(Int)
        /// Everything between `ESC [200~` and `ESC [201~`, CR LF and CR turned into LF: one message.
        case paste(String)
    }

    public struct Modifiers: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let shift = Modifiers(rawValue: 1)
        public static let alt = Modifiers(rawValue: 2)
        public static let control = Modifiers(rawValue: 4)
    }

    public var code: Code
    public var modifiers: Modifiers

    public init(_ code: Code, _ modifiers: Modifiers = []) {
        self.code = code
        self.modifiers = modifiers
    }

    /// A plain printable character.
    public static func character(_ character: Character) -> Key { Key(.character(character)) }
    /// Ctrl + a letter (given in lower case) or one of `@ [ \ ] ^ _` and space.
    public static func control(_ character: Character) -> Key { Key(.character(character), .control) }
    /// Alt + a character.
    public static func alt(_ character: Character) -> Key { Key(.character(character), .alt) }
    public static func paste(_ text: String) -> Key { Key(.paste(text)) }

    public static let enter = Key(.enter)
    public static let tab = Key(.tab)
    public static let backspace = Key(.backspace)
    public static let delete = Key(.delete)
    public static let escape = Key(.escape)
    public static let up = Key(.up)
    public static let down = Key(.down)
    public static let left = Key(.left)
    public static let right = Key(.right)
    public static let home = Key(.home)
    public static let end = Key(.end)
    public static let pageUp = Key(.pageUp)
    public static let pageDown = Key(.pageDown)

    /// The same key with more modifiers.
    public func with(_ extra: Modifiers) -> Key { Key(code, modifiers.union(extra)) }

    /// The printable character of an unmodified (or Shift-only) character key.
    public var printable: Character? {
        guard case .character(let character) = code, modifiers.isSubset(of: .shift) else { return nil }
        return character
    }

    public var description: String {
        var prefix = ""
        if modifiers.contains(.control) { prefix += "C-" }
        if modifiers.contains(.alt) { prefix += "M-" }
        if modifiers.contains(.shift) { prefix += "S-" }
        switch code {
        case .character(let character): return prefix + String(character)
        case .function(let number): return prefix + "F\(number)"
        case .paste(let text): return prefix + "paste(\(text.count) characters)"
        default: return prefix + "\(code)"
        }
    }
}
