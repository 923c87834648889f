import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A directory of files a listener serves over plain HTTP: a web app's build (OpenClaw's Control
/// UI on the gateway port). GET and HEAD only; a content type by extension; `index.html` for `/`
/// and for any path that names no file and does not look like one (the app's own routes, as
/// OpenClaw's gateway does), a `404` for a missing file; and nothing outside the directory: no
/// `..` or `.` segment (encoded or not), no hidden file, no symlink that leads out, no file past
/// `maxFileBytes`. Files stream from disk (libwebsockets reads them as the socket drains).
public struct StaticSite: Sendable, Equatable {
    /// The directory, every symlink resolved.
    public let root: String
    public let maxFileBytes: Int

    public static let defaultMaxFileBytes = 32 << 20

    /// Why a directory cannot be served.
    public struct Unusable: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Fails unless `directory` is a directory holding an `index.html`.
    public init(directory: String, maxFileBytes: Int = defaultMaxFileBytes) throws(Unusable) {
        guard let resolved = Self.realPath(directory), Self.kind(of: resolved)?.isDirectory == true else {
            throw Unusable(description: "\(directory) is not a directory")
        }
        root = resolved
        self.maxFileBytes = maxFileBytes
        guard Self.kind(of: resolved + "/index.html")?.isDirectory == false else {
            throw Unusable(description: "\(directory) has no index.html (give the folder of a Control UI build, e.g. openclaw's dist/control-ui)")
        }
    }

    /// The answer to a request for `path` (without its query).
    public func response(method: String, path: String) -> HTTPResponse {
        guard method == "GET" || method == "HEAD" else {
            return HTTPResponse(
                status: 405,
                contentType: "text/plain; charset=utf-8",
                headers: [("allow", "GET, HEAD")],
                body: .bytes(Array("Method Not Allowed".utf8))
            )
        }
        guard let file = file(for: path) else { return .text(404, "Not Found") }
        return HTTPResponse(
            status: 200,
            contentType: Self.contentType(of: file),
            headers: [("cache-control", "no-cache"), ("x-content-type-options", "nosniff")],
            body: .file(path: file)
        )
    }

    /// The file that answers `path`, resolved; nil when none may.
    func file(for path: String) -> String? {
        guard var segments = Self.segments(of: path) else { return nil }
        // A route of the app loads its assets relative to itself (`/chat/assets/app.js`).
        if let assets = segments.firstIndex(of: "assets"), assets > 0 { segments.removeFirst(assets) }
        if !segments.isEmpty, let found = regularFile(segments.joined(separator: "/")) { return found }
        if let last = segments.last, last.contains(".") { return nil }
        return regularFile("index.html")
    }

    /// The path's segments, percent-decoded; nil when one may not be served (`.`, `..`, hidden,
    /// a NUL or a backslash, an encoding that does not decode).
    static func segments(of path: String) -> [String]? {
        guard let decoded = path.removingPercentEncoding, !decoded.contains("\0"), !decoded.contains("\\") else { return nil }
        let segments = decoded.split(separator: "/").map(String.init)
        guard segments.allSatisfy({ !$0.hasPrefix(".") }) else { return nil }
        return segments
    }

    /// `relative` under the root when it resolves to a regular file inside it, within the size bound.
    private func regularFile(_ relative: String) -> String? {
        guard let resolved = Self.realPath(root + "/" + relative), resolved.hasPrefix(root + "/"),
            let kind = Self.kind(of: resolved), !kind.isDirectory, kind.size <= maxFileBytes
        else { return nil }
        return resolved
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// A regular file's size, or that it is a directory; nil for anything else (or nothing).
    private static func kind(of path: String) -> (isDirectory: Bool, size: Int)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return (true, 0)
        case S_IFREG: return (false, Int(info.st_size))
        default: return nil
        }
    }

    static let contentTypes: [String: String] = [
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "mjs": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8", "json": "application/json; charset=utf-8",
        "map": "application/json; charset=utf-8", "webmanifest": "application/manifest+json", "svg": "image/svg+xml",
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
        "ico": "image/x-icon", "woff2": "font/woff2", "woff": "font/woff", "ttf": "font/ttf", "wasm": "application/wasm",
        "txt": "text/plain; charset=utf-8",
    ]

    static func contentType(of file: String) -> String {
        let name = file.split(separator: "/").last ?? ""
        guard let dot = name.lastIndex(of: ".") else { return "application/octet-stream" }
        return contentTypes[name[name.index(after: dot)...].lowercased()] ?? "application/octet-stream"
    }
}
