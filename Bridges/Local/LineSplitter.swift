/// Cuts a child's output into lines of at most `limit` bytes, however the reads split it.
struct LineSplitter: Sendable {
    let limit: Int
    /// The start of a line whose end has not arrived yet.
    private var partial: [UInt8] = []
    /// Dropping the rest of a line that passed the limit.
    private var skipping = false

    init(limit: Int) { self.limit = limit }

    /// Hands each complete line (without its line break) to `line`, in order. Returns how many
    /// lines passed `limit`: their bytes are dropped up to their line break.
    mutating func split(_ bytes: ArraySlice<UInt8>, _ line: (ArraySlice<UInt8>) -> Void) -> Int {
        var overlong = 0
        var rest = bytes
        while let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
            let piece = rest[..<newline]
            rest = rest[rest.index(after: newline)...]
            if skipping {
                skipping = false
            } else if partial.count + piece.count > limit {
                overlong += 1
            } else if partial.isEmpty {
                line(piece)
            } else {
                partial += piece
                line(partial[...])
            }
            partial.removeAll(keepingCapacity: partial.count <= 65_536)
        }
        if skipping { return overlong }
        if partial.count + rest.count > limit {
            overlong += 1
            skipping = true
            partial.removeAll()
        } else {
            partial += rest
        }
        return overlong
    }
}
