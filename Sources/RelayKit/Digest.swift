import Crypto

/// SHA-256 as lowercase hex: how tokens are stored and how device ids are derived.
public enum Digest {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    public static func sha256Hex(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in SHA256.hash(data: Array(bytes)) {
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func sha256Hex(_ text: String) -> String { sha256Hex(text.utf8) }
}
