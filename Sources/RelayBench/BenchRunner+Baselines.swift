import Foundation
import Logging
import RelayCore
import RelayTransport

/// A bare libwebsockets echo server: the transport's own limit on this machine.
final class EchoServer: ListenerHandler {
    func handleHTTP(_ exchange: HTTPExchange) { exchange.respond(.text(404, "echo server")) }
    func webSocketOpened(_ connection: WebSocketConnection) {}
    func webSocketClosed(_ connection: WebSocketConnection) {}

    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        if case .text(let text) = message { connection.send(text: text) }
    }
}

/// Keeps `window` frames in flight per connection against an echo server; every echo completes one.
final class EchoDriver: ClientHandler {
    struct Result: Sendable {
        var frames = 0
        var seconds = 0.0
        var latency = LatencyRecorder()
        var error: String?
    }

    private let target: ServiceLoop.ClientTarget
    private let connections: Int
    private let window: Int
    private let durationMicros: UInt64
    private let loop: ServiceLoop
    private var open: [WebSocketConnection] = []
    private var inFlight: [ObjectIdentifier: [UInt64]] = [:]
    private var startedAt: UInt64 = 0
    private var result = Result()
    private var completion: ((Result) -> Void)?
    private var draining = 0

    init(loop: ServiceLoop, target: ServiceLoop.ClientTarget, connections: Int, window: Int, durationSeconds: Double) {
        self.loop = loop
        self.target = target
        self.connections = connections
        self.window = window
        self.durationMicros = UInt64(durationSeconds * 1_000_000)
    }

    func run(completion: @escaping (Result) -> Void) {
        self.completion = completion
        for _ in 0..<connections { loop.connect(to: target, handler: self) }
    }

    func clientConnected(_ connection: WebSocketConnection) {
        open.append(connection)
        guard open.count == connections else { return }
        startedAt = nowMicros()
        for connection in open { for _ in 0..<window { send(on: connection) } }
    }

    private func send(on connection: WebSocketConnection) {
        inFlight[ObjectIdentifier(connection), default: []].append(nowMicros())
        connection.send(text: #"{"type":"message","id":"c_echo","content":"bench"}"#)
    }

    func client(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        let now = nowMicros()
        let key = ObjectIdentifier(connection)
        guard var queue = inFlight[key], !queue.isEmpty else { return }
        result.latency.record(now - queue.removeFirst())
        inFlight[key] = queue
        result.frames += 1
        if now - startedAt < durationMicros {
            send(on: connection)
        } else if inFlight.values.allSatisfy(\.isEmpty) {
            finish(now)
        }
    }

    func clientClosed(_ connection: WebSocketConnection?, error: String?) {
        if completion != nil, result.error == nil, error != nil {
            result.error = error
            finish(nowMicros())
        }
    }

    private func finish(_ now: UInt64) {
        guard let completion else { return }
        self.completion = nil
        result.seconds = Double(now - startedAt) / 1e6
        for connection in open { connection.close(code: 1000) }
        completion(result)
    }
}

extension BenchRunner {
    func runBaseline(_ name: String) throws {
        var logger = Logger(label: "bench-echo")
        logger.logLevel = .error
        let echoLoop = ServiceLoop(logger: logger)
        echoLoop.addListener(
            ListenerConfig(name: "echo", host: "127.0.0.1", port: 0, webSocketPaths: ["/ws"], pingIntervalMillis: 0),
            handler: EchoServer()
        )
        let echoPort = try echoLoop.start()["echo"] ?? 0
        defer { echoLoop.stop(graceMillis: 200) }
        var port = echoPort
        var nginx: Process?
        var nginxPrefix: String?
        defer {
            nginx?.terminate()
            nginx?.waitUntilExit()
            if let nginxPrefix { try? FileManager.default.removeItem(atPath: nginxPrefix) }
        }
        switch name {
        case "direct":
            break
        case "nginx":
            let started = try startNginx(upstreamPort: echoPort)
            nginx = started.process
            port = started.port
            nginxPrefix = started.prefix
        default:
            throw BenchError("unknown baseline \(name) (direct, nginx)")
        }
        progress(
            "baseline \(name): \(options.devices) connections × \(options.window) in flight against a bare lws echo server\(name == "nginx" ? " behind nginx" : "")"
        )
        let (loop, target) = (self.loop, ServiceLoop.ClientTarget(host: "127.0.0.1", port: port, path: "/ws"))
        let (connections, window, seconds) = (options.devices, options.window, options.seconds)
        let cpu = CPUMeter()
        let result: EchoDriver.Result = try waitOnLoop(loop, timeout: seconds + 60) { done in
            let driver = EchoDriver(loop: loop, target: target, connections: connections, window: window, durationSeconds: seconds)
            driver.run { result in
                _ = driver
                done(result)
            }
        }
        if let error = result.error { throw BenchError("baseline \(name): \(error)") }
        let rate = result.seconds > 0 ? Double(result.frames) / result.seconds : 0
        report.add("baseline-\(name)", "throughput", rate, "echoes/s")
        report.add("baseline-\(name)", "frames", rate * 2, "frames/s (1 in, 1 out per echo)")
        for (key, value) in result.latency.summary("send_to_echo").sorted(by: { $0.key < $1.key }) {
            report.add("baseline-\(name)", key, value, "ms")
        }
        report.add("baseline-\(name)", "generator_cpu", cpu.share * 100, "% of one core")
        let relayFrames = report.figures.first { $0.scenario == "roundtrip" && $0.metric == "frames" }?.value
        if let relayFrames, rate > 0 { report.add("baseline-\(name)", "relay_over_\(name)_frames", relayFrames / (rate * 2), "ratio") }
    }

    /// nginx from Debian's package, on loopback, proxying WebSocket to the echo server.
    private func startNginx(upstreamPort: Int) throws -> (process: Process, port: Int, prefix: String) {
        let binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let binary else { throw BenchError("nginx is not installed (apt-get install -y nginx-light)") }
        let prefix = (options.workDirectory as NSString).appendingPathComponent("clawrelay-bench-nginx-\(getpid())")
        try FileManager.default.createDirectory(atPath: prefix, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(atPath: prefix + "/logs", withIntermediateDirectories: true)
        let port = freeLoopbackPort()
        let config = """
            worker_processes 1;
            daemon off;
            pid \(prefix)/nginx.pid;
            error_log \(prefix)/logs/error.log warn;
            events { worker_connections 4096; }
            http {
                access_log off;
                client_body_temp_path \(prefix)/body;
                proxy_temp_path \(prefix)/proxy;
                fastcgi_temp_path \(prefix)/fastcgi;
                uwsgi_temp_path \(prefix)/uwsgi;
                scgi_temp_path \(prefix)/scgi;
                server {
                    listen 127.0.0.1:\(port);
                    location / {
                        proxy_pass http://127.0.0.1:\(upstreamPort);
                        proxy_http_version 1.1;
                        proxy_set_header Upgrade $http_upgrade;
                        proxy_set_header Connection "upgrade";
                        proxy_read_timeout 300s;
                    }
                }
            }
            """
        let configPath = prefix + "/nginx.conf"
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-p", prefix, "-c", configPath]
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if canConnect(port: port) { return (process, port, prefix) }
            usleep(50_000)
        }
        process.terminate()
        throw BenchError("nginx did not start listening on 127.0.0.1:\(port)")
    }

    private func canConnect(port: Int) -> Bool {
        guard let fd = connectLoopback(port: port) else { return false }
        close(fd)
        return true
    }
}
