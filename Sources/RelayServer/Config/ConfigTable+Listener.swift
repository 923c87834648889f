/// Keys every listener section shares.
extension ConfigTable {
    /// `tls_cert` and `tls_key`: both or neither, each a readable file.
    func tlsPaths() throws(ConfigError) -> (certificate: String?, key: String?) {
        let certificate = try readableFile("tls_cert")
        let key = try readableFile("tls_key")
        switch (certificate, key) {
        case (.some, nil): throw error(.missingKey, key: "tls_cert", "needs tls_key as well")
        case (nil, .some): throw error(.missingKey, key: "tls_key", "needs tls_cert as well")
        default: return (certificate, key)
        }
    }

    /// `key` (default `backend`): the name of a configured `[[backends]]` entry, or nil.
    func backendName(among backends: [BackendSettings], key: String = "backend") throws(ConfigError) -> String? {
        guard let backend = try string(key) else { return nil }
        guard backends.contains(where: { $0.name == backend }) else {
            let names = backends.map(\.name).joined(separator: ", ")
            throw error(.unknownBackend, key: key, "no backend named \(quoted(backend)); configured: \(names)")
        }
        return backend
    }
}
