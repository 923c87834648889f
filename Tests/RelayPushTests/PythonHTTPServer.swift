import Foundation
import Synchronization
import Testing

/// A Python `ThreadingHTTPServer` on 127.0.0.1 (HTTP/1.1 keep-alive, or HTTPS given a cert and
/// key), on a port the OS picks. It reports each request's path as it arrives.
///
/// Paths: `/echo` answers the method, headers, body and the client's port as JSON (with `X-Dup`
/// sent twice); `/status/N` answers N; `/slow/MS` answers after MS milliseconds; `/big/N` answers
/// N bytes. The child exits when killed or when this process goes (its stdin closes).
final class PythonHTTPServer: Sendable {
    let port: Int
    /// Each request's path, in arrival order.
    let hits: AsyncStream<String>
    private let pid: Int32
    private let stdin: FileHandle

    static func start(certificate: String? = nil, key: String? = nil) async throws -> PythonHTTPServer {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", "-c", script] + [certificate, key].compactMap { $0 }
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        let (ports, portLine) = AsyncStream.makeStream(of: Int.self)
        let (hits, hit) = AsyncStream.makeStream(of: String.self)
        let pending = Mutex<[UInt8]>([])
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                portLine.finish()
                hit.finish()
                return
            }
            let lines = pending.withLock { buffer -> [String] in
                buffer += data
                var lines: [String] = []
                while let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(String(decoding: buffer[..<end], as: UTF8.self))
                    buffer.removeSubrange(...end)
                }
                return lines
            }
            for line in lines {
                if line.hasPrefix("port "), let port = Int(line.dropFirst(5)) { portLine.yield(port) }
                if line.hasPrefix("hit ") { hit.yield(String(line.dropFirst(4))) }
            }
        }
        try process.run()
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next(), "the Python server printed no port")
        return PythonHTTPServer(port: port, hits: hits, pid: process.processIdentifier, stdin: input.fileHandleForWriting)
    }

    private init(port: Int, hits: AsyncStream<String>, pid: Int32, stdin: FileHandle) {
        self.port = port
        self.hits = hits
        self.pid = pid
        self.stdin = stdin
    }

    func url(_ path: String, scheme: String = "http") -> String { "\(scheme)://127.0.0.1:\(port)\(path)" }

    /// Kills the child and reaps it.
    func stop() {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        try? stdin.close()
    }

    /// The next `count` request paths, failing the test past `seconds`.
    func nextHits(_ count: Int, within seconds: Int = 30) async throws -> [String] {
        try await collect(count, from: hits, within: seconds)
    }

    private static let script = """
        import json, os, ssl, sys, threading, time
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        output = threading.Lock()

        def report(line):
            # One write per line under a lock: print() from two threads interleaves text and newline.
            with output:
                sys.stdout.write(line + "\\n")
                sys.stdout.flush()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def reply(self, status, body, headers=()):
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def answer(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                report("hit " + self.path)
                if self.path == "/echo":
                    doc = {"method": self.command, "headers": [[k, v] for k, v in self.headers.items()], "body": list(body),
                           "peerPort": self.client_address[1]}
                    self.reply(200, json.dumps(doc).encode(), [("Content-Type", "application/json"), ("X-Dup", "first"), ("X-Dup", "second")])
                elif self.path.startswith("/status/"):
                    status = int(self.path[len("/status/"):])
                    self.reply(status, b"status %d" % status)
                elif self.path.startswith("/slow/"):
                    time.sleep(int(self.path[len("/slow/"):]) / 1000)
                    self.reply(200, b"late")
                elif self.path.startswith("/big/"):
                    self.reply(200, b"x" * int(self.path[len("/big/"):]))
                else:
                    self.reply(404, b"no such path")

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = answer

        def exit_when_parent_goes():
            sys.stdin.read()
            os._exit(0)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        if len(sys.argv) == 3:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(sys.argv[1], sys.argv[2])
            context.set_alpn_protocols(["http/1.1"])
            server.socket = context.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=exit_when_parent_goes, daemon=True).start()
        report("port %d" % server.server_address[1])
        server.serve_forever()
        """
}

/// Values a callback hands over from another thread, awaited with a deadline.
final class Completions<Value: Sendable>: Sendable {
    private let stream: AsyncStream<Value>
    private let continuation: AsyncStream<Value>.Continuation

    init() { (stream, continuation) = AsyncStream.makeStream(of: Value.self) }

    func record(_ value: Value) { continuation.yield(value) }

    /// The next `count` values, failing the test past `seconds`.
    func next(_ count: Int, within seconds: Int = 30) async throws -> [Value] {
        try await collect(count, from: stream, within: seconds)
    }

    /// What came beyond the values `next` returned; call once nothing more can come.
    func rest() async -> [Value] {
        continuation.finish()
        var rest: [Value] = []
        for await value in stream { rest.append(value) }
        return rest
    }
}

private func collect<Value: Sendable>(_ count: Int, from stream: AsyncStream<Value>, within seconds: Int) async throws -> [Value] {
    let values = try await withThrowingTaskGroup(of: [Value]?.self) { group in
        group.addTask {
            var values: [Value] = []
            for await value in stream {
                values.append(value)
                if values.count == count { break }
            }
            return values
        }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        return first
    }
    let got = try #require(values, "\(count) values did not come within \(seconds) s")
    try #require(got.count == count, "the stream ended after \(got.count) of \(count) values")
    return got
}
