import CompanionWire
import Foundation

/// The projects root: the only place Companion clients may work in. Its subfolders are the app's
/// projects; a working directory a client names is resolved inside it.
struct CompanionProjects: Sendable, Equatable {
    /// Absolute, without symlinks.
    let root: String

    init(root: String) { self.root = URL(fileURLWithPath: root).standardizedFileURL.resolvingSymlinksInPath().path }

    /// A client's working directory inside the root (relative ones are taken inside it; none is
    /// the root itself), without symlinks.
    func directory(_ raw: String?) throws(CompanionError) -> String {
        guard let raw, !raw.isEmpty else { return root }
        guard raw.utf8.count <= 4096, !raw.contains("\0") else { throw .outsideRoot(raw) }
        let absolute = raw.hasPrefix("/") ? raw : root + "/" + raw
        let resolved = URL(fileURLWithPath: absolute).standardizedFileURL.resolvingSymlinksInPath().path
        guard resolved == root || resolved.hasPrefix(root + "/") else { throw .outsideRoot(raw) }
        return resolved
    }

    /// The non-hidden subfolders, by name.
    func list() -> ProjectList {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter { name in
            !name.hasPrefix(".") && isFolder(root + "/" + name)
        }.sorted()
        return ProjectList(basePath: root, projects: names.map { ProjectList.Project(name: $0, path: root + "/" + $0) })
    }

    enum Refusal: Error, Equatable {
        /// A name that is not one folder's (hidden, a path, too long).
        case invalidName
        case notFound
    }

    /// The folder of project `name`.
    func project(named name: String) -> Result<String, Refusal> {
        guard !name.isEmpty, !name.hasPrefix("."), !name.contains("/"), !name.contains("\0"), name.utf8.count <= 255 else {
            return .failure(.invalidName)
        }
        let place = root + "/" + name
        return isFolder(place) ? .success(place) : .failure(.notFound)
    }

    private func isFolder(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
