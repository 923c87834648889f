extension String {
    /// The text a C function wrote into `buffer`, up to its first NUL (all of it if none); bytes
    /// that are not UTF-8 are replaced.
    init(cBuffer buffer: [CChar]) {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        self = String(decoding: bytes, as: UTF8.self)
    }
}
