import Foundation
import Testing

@testable import RelayTransport

/// A web app's build served from a directory: types, the single-page app's routes, and nothing
/// outside the directory.
@Suite struct StaticSiteTests {
    /// A build folder like OpenClaw's `dist/control-ui`, a secret beside it and a link out of it.
    final class Build {
        let base = NSTemporaryDirectory() + "static-site-" + UUID().uuidString
        var root: String { base + "/ui" }

        init() throws {
            let files = FileManager.default
            try files.createDirectory(atPath: root + "/assets/fonts", withIntermediateDirectories: true)
            try files.createDirectory(atPath: root + "/docs", withIntermediateDirectories: true)
            for (path, text) in [
                "index.html": "<!doctype html><title>ui</title>", "assets/app-1.js": "console.log(1)", "assets/app.css": "body{}",
                "assets/fonts/inter.woff2": "w2", "favicon.ico": "ico", "logo.svg": "<svg/>", "manifest.json": "{}",
                "assets/app-1.js.map": "{}", ".env": "SECRET=1", "README": "plain",
            ] {
                try Data(text.utf8).write(to: URL(fileURLWithPath: root + "/" + path))
            }
            try Data("top secret".utf8).write(to: URL(fileURLWithPath: base + "/secret.txt"))
            try files.createSymbolicLink(atPath: root + "/leak.txt", withDestinationPath: base + "/secret.txt")
            try files.createSymbolicLink(atPath: root + "/outside", withDestinationPath: base)
            try files.createSymbolicLink(atPath: root + "/inside.js", withDestinationPath: root + "/assets/app-1.js")
        }

        deinit { try? FileManager.default.removeItem(atPath: base) }
    }

    func served(_ site: StaticSite, _ path: String, method: String = "GET") -> (status: Int, type: String, file: String?) {
        let response = site.response(method: method, path: path)
        guard case .file(let file) = response.body else { return (response.status, response.contentType, nil) }
        return (response.status, response.contentType, file.replacingOccurrences(of: site.root + "/", with: ""))
    }

    @Test func filesGoOutWithTheirTypesAndRoutesGetTheIndex() throws {
        let build = try Build()
        let site = try StaticSite(directory: build.root)
        let expected: [(String, String, String)] = [
            ("/", "index.html", "text/html; charset=utf-8"), ("/index.html", "index.html", "text/html; charset=utf-8"),
            ("/chat", "index.html", "text/html; charset=utf-8"), ("/settings/devices/", "index.html", "text/html; charset=utf-8"),
            ("/docs", "index.html", "text/html; charset=utf-8"), ("/README", "README", "application/octet-stream"),
            ("/assets/app-1.js", "assets/app-1.js", "text/javascript; charset=utf-8"),
            ("/chat/assets/app-1.js", "assets/app-1.js", "text/javascript; charset=utf-8"),
            ("/assets/app.css", "assets/app.css", "text/css; charset=utf-8"), ("/assets/fonts/inter.woff2", "assets/fonts/inter.woff2", "font/woff2"),
            ("/favicon.ico", "favicon.ico", "image/x-icon"), ("/logo.svg", "logo.svg", "image/svg+xml"),
            ("/manifest.json", "manifest.json", "application/json; charset=utf-8"),
            ("/assets/app-1.js.map", "assets/app-1.js.map", "application/json; charset=utf-8"),
            ("/assets/app%2D1.js", "assets/app-1.js", "text/javascript; charset=utf-8"),
            ("/inside.js", "assets/app-1.js", "text/javascript; charset=utf-8"),
        ]
        for (path, file, type) in expected {
            let answer = served(site, path)
            #expect(answer.status == 200 && answer.file == file && answer.type == type, "\(path): \(answer)")
        }
        #expect(served(site, "/assets/app-1.js", method: "HEAD").file == "assets/app-1.js")
        let headers = site.response(method: "GET", path: "/").headers
        #expect(headers.contains { $0 == ("cache-control", "no-cache") } && headers.contains { $0 == ("x-content-type-options", "nosniff") })
    }

    @Test func nothingOutsideTheDirectoryNorHiddenNorMissingNorTooLarge() throws {
        let build = try Build()
        let site = try StaticSite(directory: build.root, maxFileBytes: 10)
        for path in [
            "/../secret.txt", "/assets/../../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E%2Fsecret.txt", "/..%2fsecret.txt", "/leak.txt",
            "/outside/secret.txt", "/.env", "/assets/.hidden.js", "/missing.js", "/assets/nope.css", "/a%00b", "/a\\..\\secret.txt",
            "/%zz", "/assets/app.css%00.js",
        ] {
            let answer = served(site, path)
            #expect(answer.status == 404 && answer.file == nil, "\(path): \(answer)")
        }
        #expect(served(site, "/assets/app-1.js").status == 404, "14 bytes is past the 10-byte bound")
        #expect(served(site, "/assets/app.css").status == 200)
        let post = site.response(method: "POST", path: "/")
        #expect(post.status == 405 && post.headers.contains { $0 == ("allow", "GET, HEAD") })
    }

    @Test func aDirectoryWithoutAnIndexIsRefused() throws {
        let build = try Build()
        #expect(throws: StaticSite.Unusable.self) { try StaticSite(directory: build.root + "/assets") }
        #expect(throws: StaticSite.Unusable.self) { try StaticSite(directory: build.root + "/index.html") }
        #expect(throws: StaticSite.Unusable.self) { try StaticSite(directory: build.base + "/nothing-here") }
    }
}
