import Foundation

/// Identifier formats shared by every protocol.
public enum Identifiers {
    /// A lowercase UUIDv4 string (from the system's CSPRNG, `getrandom`).
    public static func newUUID() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = randomBytes(&generator)
        bytes.6 = (bytes.6 & 0x0F) | 0x40
        bytes.8 = (bytes.8 & 0x3F) | 0x80
        return format(bytes)
    }

    /// A lowercase UUIDv7 string: the Unix time in milliseconds, then random bits. Ids made later
    /// sort later, so an index on them grows at its end instead of touching a random page per
    /// insert (what the store's event and message tables need on the hot path).
    public static func newOrderedUUID(nowMillis: Int64 = SystemClock().nowMillis()) -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = randomBytes(&generator)
        let time = UInt64(max(0, nowMillis)) & 0xFFFF_FFFF_FFFF
        bytes.0 = UInt8(truncatingIfNeeded: time >> 40)
        bytes.1 = UInt8(truncatingIfNeeded: time >> 32)
        bytes.2 = UInt8(truncatingIfNeeded: time >> 24)
        bytes.3 = UInt8(truncatingIfNeeded: time >> 16)
        bytes.4 = UInt8(truncatingIfNeeded: time >> 8)
        bytes.5 = UInt8(truncatingIfNeeded: time)
        bytes.6 = (bytes.6 & 0x0F) | 0x70
        bytes.8 = (bytes.8 & 0x3F) | 0x80
        return format(bytes)
    }

    /// A new server event id, `s_<uuid>` (time-ordered; clients treat it as opaque).
    public static func newEventID() -> String { "s_" + newOrderedUUID() }

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

    private typealias UUIDBytes = (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)

    private static func randomBytes(_ generator: inout SystemRandomNumberGenerator) -> UUIDBytes {
        let (high, low) = (generator.next() as UInt64, generator.next() as UInt64)
        return unsafeBitCast((high, low), to: UUIDBytes.self)
    }

    /// The 8-4-4-4-12 lowercase hex form.
    private static func format(_ bytes: UUIDBytes) -> String {
        withUnsafeBytes(of: bytes) { raw in
            String(unsafeUninitializedCapacity: 36) { out in
                let digits: StaticString = "0123456789abcdef"
                var index = 0
                for (position, byte) in raw.enumerated() {
                    if position == 4 || position == 6 || position == 8 || position == 10 {
                        out[index] = UInt8(ascii: "-")
                        index += 1
                    }
                    out[index] = digits.utf8Start[Int(byte >> 4)]
                    out[index + 1] = digits.utf8Start[Int(byte & 0x0F)]
                    index += 2
                }
                return index
            }
        }
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
    }
}
