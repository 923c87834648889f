import Foundation

/// The listeners' TLS files as start-up loaded them: lws reads a certificate and key once, so a
/// file renewed in place is reported by a reload as needing a restart.
struct TLSFiles {
    /// What identifies a file's contents without reading it: inode, size and modification time.
    struct Stamp: Equatable {
        let inode: UInt64
        let size: Int64
        let modified: Int64

        init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        }
    }

    /// By `tls_cert of [clawline]`-style subject, with its path and stamp.
    private var files: [String: (path: String, stamp: Stamp?)] = [:]

    init(_ config: RelayConfig) {
        for (name, certificate, key) in config.tlsListeners {
            files["tls_cert of [\(name)]"] = (certificate, Stamp(path: certificate))
            files["tls_key of [\(name)]"] = (key, Stamp(path: key))
        }
    }

    /// The files `config` names at the paths loaded at start whose contents changed since.
    func changedOnDisk(in config: RelayConfig) -> [ConfigChange] {
        let now = TLSFiles(config)
        return now.files.keys.sorted().compactMap { subject in
            guard let loaded = files[subject], let current = now.files[subject], loaded.path == current.path, loaded.stamp != current.stamp
            else { return nil }
            return ConfigChange(subject, "changed on disk", detail: current.path, needsRestart: true)
        }
    }
}
