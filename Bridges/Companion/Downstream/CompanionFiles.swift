import CompanionWire
import Foundation

/// `POST /api/files/content {path, workingDirectory}`: a text file of a project as the newest app
/// shows it when the user taps a path in an answer (companion-http.md §2, row 7). Confined to the
/// projects root (symlinks resolved, and refused when they lead out of it), at most 1 MB, UTF-8
/// text only. A bare file name is looked for in the project: the most recently modified wins, and
/// a warning lists the others. Reads the file system: not on the loop.
struct CompanionFiles: Sendable {
    let projects: CompanionProjects
    static let maxBytes = 1 << 20
    /// How far a bare name is looked for: directories deep, and entries seen in all.
    static let maxDepth = 12
    static let maxEntries = 20_000
    /// Folders a search never enters (besides hidden ones).
    static let skipped: Set<String> = ["node_modules", "build", "dist", "DerivedData", "Pods", "target"]

    static let mimeTypes: [String: String] = [
        "js": "text/javascript", "ts": "text/typescript", "jsx": "text/javascript", "tsx": "text/typescript", "py": "text/x-python",
        "swift": "text/x-swift", "java": "text/x-java-source", "cpp": "text/x-c++src", "c": "text/x-csrc", "h": "text/x-chdr",
        "hpp": "text/x-c++hdr", "go": "text/x-go", "rs": "text/x-rustsrc", "rb": "text/x-ruby", "php": "text/x-php", "html": "text/html",
        "css": "text/css", "scss": "text/x-scss", "sass": "text/x-sass", "json": "application/json", "xml": "application/xml",
        "yml": "text/x-yaml", "yaml": "text/x-yaml", "toml": "text/x-toml", "md": "text/markdown", "txt": "text/plain",
        "sh": "text/x-shellscript", "bat": "text/x-msdos-batch", "sql": "text/x-sql", "r": "text/x-rsrc", "m": "text/x-objcsrc",
        "mm": "text/x-objc++src", "kt": "text/x-kotlin", "cs": "text/x-csharp", "log": "text/plain", "csv": "text/csv", "ini": "text/plain",
        "cfg": "text/plain", "conf": "text/plain", "gradle": "text/plain", "plist": "application/xml", "lock": "text/plain",
    ]

    struct Refusal: Error, Equatable {
        var status: Int
        var body: FileContentRefusal
    }

    func read(_ fields: CompanionFields) -> Result<FileContentAnswer, Refusal> {
        guard let requested = fields.string("path"), !requested.isEmpty, requested.utf8.count <= 4096, !requested.contains("\0") else {
            return .failure(Refusal(status: 400, body: FileContentRefusal("File path is required", error: "INVALID_PATH")))
        }
        let base: String
        do { base = try projects.directory(fields.string("workingDirectory")) } catch {
            return .failure(Refusal(status: 400, body: FileContentRefusal("Invalid working directory", error: "INVALID_WORKING_DIRECTORY")))
        }
        var warning: FileContentAnswer.Warning?
        let path: String
        if requested.contains("/") || requested.contains("\\") {
            let absolute = requested.hasPrefix("/") ? requested : base + "/" + requested
            let resolved = URL(fileURLWithPath: absolute).standardizedFileURL.resolvingSymlinksInPath().path
            guard resolved.hasPrefix(projects.root + "/") else {
                return .failure(Refusal(status: 403, body: FileContentRefusal("Access denied to file path", error: "PATH_VALIDATION_FAILED")))
            }
            path = resolved
        } else {
            let matches = Self.search(requested, in: base, root: projects.root)
            guard let newest = matches.first else {
                return .failure(
                    Refusal(
                        status: 404,
                        body: FileContentRefusal("File '\(requested.prefix(255))' not found in project directory", error: "FILE_NOT_FOUND")
                    )
                )
            }
            path = newest.path
            if matches.count > 1 { warning = .duplicates(of: requested, matches.map { $0.listed(under: base) }) }
        }
        return Self.content(of: path).map { FileContentAnswer(content: $0, warning: warning) }
    }

    /// The file's text, or why it cannot be shown.
    static func content(of path: String) -> Result<FileContentAnswer.Content, Refusal> {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return .failure(Refusal(status: 404, body: FileContentRefusal("File not found", error: "FILE_NOT_FOUND")))
        }
        guard !isDirectory.boolValue else {
            return .failure(Refusal(status: 400, body: FileContentRefusal("Cannot view directory contents", error: "IS_DIRECTORY")))
        }
        let name = (path as NSString).lastPathComponent
        let ext = (name as NSString).pathExtension.lowercased()
        guard ext.isEmpty || mimeTypes[ext] != nil else {
            return .failure(
                Refusal(
                    status: 415,
                    body: FileContentRefusal("File type '.\(ext.prefix(32))' is not supported for viewing", error: "UNSUPPORTED_FILE_TYPE")
                )
            )
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            return .failure(Refusal(status: 403, body: FileContentRefusal("Permission denied", error: "PERMISSION_DENIED")))
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maxBytes + 1)) ?? Data()
        guard data.count <= maxBytes else {
            return .failure(Refusal(status: 413, body: FileContentRefusal("File is too large. Maximum size is 1024KB", error: "FILE_TOO_LARGE")))
        }
        guard !data.contains(0), let text = String(data: data, encoding: .utf8) else {
            return .failure(Refusal(status: 415, body: FileContentRefusal("Binary files are not supported", error: "BINARY_FILE")))
        }
        return .success(FileContentAnswer.Content(filename: name, content: text, mimeType: mimeTypes[ext] ?? "text/plain", size: data.count))
    }

    struct Match {
        var path: String
        var size: Int
        var modified: Date

        func listed(under base: String) -> FileContentAnswer.Warning.Duplicate {
            let relative = path.hasPrefix(base + "/") ? String(path.dropFirst(base.count + 1)) : path
            return FileContentAnswer.Warning.Duplicate(relativePath: relative, size: size, lastModified: modified)
        }
    }

    /// Regular files named `name` under `base` (no symlinks followed, hidden and build folders
    /// skipped, bounded), the most recently modified first.
    static func search(_ name: String, in base: String, root: String) -> [Match] {
        var matches: [Match] = []
        var queue: [(path: String, depth: Int)] = [(base, 0)]
        var seen = 0
        while !queue.isEmpty, seen < maxEntries {
            let (directory, depth) = queue.removeFirst()
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
                seen += 1
                guard seen <= maxEntries else { break }
                let path = directory + "/" + entry
                guard let attributes = try? FileManager.default.attributesOfItem(atPath: path), let type = attributes[.type] as? FileAttributeType
                else {
                    continue
                }
                if type == .typeDirectory, depth < maxDepth, !entry.hasPrefix("."), !skipped.contains(entry) { queue.append((path, depth + 1)) }
                if type == .typeRegular, entry == name {
                    let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
                    matches.append(Match(path: path, size: size, modified: attributes[.modificationDate] as? Date ?? .distantPast))
                }
            }
        }
        return matches.sorted { $0.modified > $1.modified }
    }
}
