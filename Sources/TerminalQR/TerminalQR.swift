import CQREncode

/// QR codes drawn with Unicode half blocks, two modules per character row (libqrencode).
public enum TerminalQR {
    /// The code for `text` as terminal lines with a two-module quiet zone; nil if it cannot be encoded.
    public static func lines(for text: String) -> [String]? {
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_L, QR_MODE_8, 1) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        let quiet = 2
        let size = width + 2 * quiet
        func dark(_ x: Int, _ y: Int) -> Bool {
            let (mx, my) = (x - quiet, y - quiet)
            guard mx >= 0, my >= 0, mx < width, my < width else { return false }
            return code.pointee.data[my * width + mx] & 1 == 1
        }
        // Light modules print as blocks so the code reads on dark terminals (inverted colours scan fine).
        return stride(from: 0, to: size, by: 2).map { y in
            String(
                (0..<size).map { x -> Character in
                    switch (dark(x, y), dark(x, y + 1)) {
                    case (false, false): "█"
                    case (false, true): "▀"
                    case (true, false): "▄"
                    case (true, true): " "
                    }
                }
            )
        }
    }
}
