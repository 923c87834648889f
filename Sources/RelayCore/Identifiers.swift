import Foundation

/// Identifier formats shared by every protocol.
public enum Identifiers {
    /// A lowercase UUIDv4 string.
    public static func newUUID() -> String { UUID().uuidString.lowercased() }

    /// A new server event id, `s_<uuid>`.
    public static func newEventID() -> String { "s_" + newUUID() }

    /// A new asset id, `a_<uuid>`.
    public static func newAssetID() -> String { "a_" + newUUID() }

    /// True for the canonical 8-4-4-4-12 form with version 4 and the RFC 4122 variant, any case.
    public static func isUUIDv4(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            switch index {
            case 8, 13, 18, 23:
                guard byte == UInt8(ascii: "-") else { return false }
            default:
                guard isHex(byte) else { return false }
            }
        }
        let variant = bytes[19] | 0x20
        return bytes[14] == UInt8(ascii: "4") && [UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "a"), UInt8(ascii: "b")].contains(variant)
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
    }
}
