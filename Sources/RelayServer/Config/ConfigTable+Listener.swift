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

extension ConfigTable {
    /// The `[[<section>.<key>]]` entries of this table, each as a table of its own (none when absent).
    func entries(_ key: String) throws(ConfigError) -> [ConfigTable] {
        guard let value = table[key] else { return [] }
        let name = section.name.map { "\($0).\(key)" } ?? key
        guard let array = value.array else { throw error(.wrongType, key: key, "expected [[\(name)]] entries") }
        var entries: [ConfigTable] = []
        for element in array {
            guard let inner = element.table else { throw error(.wrongType, key: key, "expected [[\(name)]] tables") }
            entries.append(ConfigTable(table: inner, section: ConfigSection(name: name, occurrence: entries.count), source: source))
        }
        return entries
    }
}
