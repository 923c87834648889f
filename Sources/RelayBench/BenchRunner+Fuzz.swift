import Foundation
import RelayCore
import RelayTransport

extension BenchRunner {
    /// Every listener, before and after logging in: mutated frames, malformed HTTP, slow readers,
    /// slowloris and half-open sockets. The relay must stay up, answer a normal turn afterwards,
    /// and give back its sockets and memory once the clients are gone.
    func fuzz() throws {
        let secret = Identifiers.newUUID()
        let relay = try startRelay(
            extra: """
                [gateway]
                listen = "127.0.0.1:0"
                shared_token = "\(secret)"

                [companion]
                listen = "127.0.0.1:0"
                auth_token = "\(secret.replacingOccurrences(of: "-", with: ""))"

                [discoclaw]
                listen = "127.0.0.1:0"
                setup_token = "\(secret)"
                registrations_per_minute = 100000
                """,
            keepalive: (pingSeconds: 1, pongSeconds: 3)
        )
        defer { relay.stop() }
        let total = options.fuzzFrames
        let devices = try provision(relay, count: 12, sameUser: true)
        defer { release(devices) }
        let (rssBefore, fdsBefore) = (relay.residentBytes(), relay.openFileDescriptors())
        progress("fuzz: \(total) mutated frames per listener and state, malformed HTTP on every port, slow readers, slowloris")

        // Sockets that hold on: half-open and slowloris on every port, slow readers on Clawline.
        var held = [relay.clawlinePort, relay.gatewayPort, relay.companionPort, relay.discoClawPort, relay.adminPort].flatMap {
            HTTPFuzzer.slowloris(port: $0, count: 16)
        }
        held += devices.value.suffix(4).compactMap { slowReader(port: relay.clawlinePort, device: $0) }
        defer { for fd in held { close(fd) } }

        let companionToken = secret.replacingOccurrences(of: "-", with: "")
        var discoClaw = DiscoClawFuzzer(port: relay.discoClawPort)
        guard let discoClawToken = discoClaw.register(setupToken: secret), let discoClawConversation = discoClaw.conversation(token: discoClawToken)
        else {
            throw BenchError("fuzz: could not register a DiscoClaw device")
        }
        let runs: [(name: String, path: String, port: Int, login: WireFuzzer.Login, seeds: [String])] = [
            ("clawline-before-auth", "/ws", relay.clawlinePort, .none, Self.clawlineSeeds),
            ("gateway-before-connect", "/", relay.gatewayPort, .none, Self.gatewaySeeds),
            ("gateway-after-connect", "/", relay.gatewayPort, .gateway(sharedToken: secret), Self.gatewaySeeds),
            ("companion-after-auth", "/ws?token=\(companionToken)", relay.companionPort, .none, Self.companionSeeds),
            ("discoclaw-ws-after-auth", "/ws?token=\(discoClawToken)", relay.discoClawPort, .none, DiscoClawFuzzer.seeds),
        ]
        var phaseStart = Date()
        func phaseDone(_ name: String) {
            progress("fuzz: \(name) done in \(String(format: "%.1f", Date().timeIntervalSince(phaseStart))) s")
            phaseStart = Date()
        }
        for run in runs {
            let result = try wireFuzz(port: run.port, path: run.path, login: run.login, seeds: run.seeds, total: total)
            phaseDone(run.name)
            try requireAlive(relay, after: run.name)
            report.add("fuzz-\(run.name)", "frames_sent", Double(result.sent), "frames")
            report.add("fuzz-\(run.name)", "error_replies", Double(result.errorReplies), "frames")
            report.add("fuzz-\(run.name)", "connections", Double(result.connects), "sockets")
            for (code, count) in result.closesByCode.sorted(by: { $0.key < $1.key }) {
                report.add("fuzz-\(run.name)", "closes_\(code)", Double(count), "sockets")
            }
        }

        // DiscoClaw's REST routes with mutated bodies, before (no or a wrong token) and after authentication.
        let restRequests = max(40, min(4_000, total / 10))
        for (name, token) in [("before-auth", nil), ("wrong-token", String(repeating: "0", count: 64)), ("after-auth", discoClawToken)] {
            for (outcome, count) in discoClaw.run(count: restRequests, token: token, conversationID: discoClawConversation).sorted(by: {
                $0.key < $1.key
            }) {
                report.add("fuzz-discoclaw-rest-\(name)", "answered_\(outcome)", Double(count), "requests")
            }
            try requireAlive(relay, after: "discoclaw-rest-\(name)")
            phaseDone("discoclaw-rest-\(name)")
        }

        // Clawline after auth: 8 devices of the user whose 4 slow readers never read.
        let fuzzers = UncheckedBox(Array(devices.value.prefix(8)))
        let loop = self.loop
        let clawline: FuzzDriver.Result = try waitOnLoop(loop, timeout: 1_800) { done in
            let driver = FuzzDriver(devices: fuzzers.value, total: total, loop: loop)
            driver.run { result in
                _ = driver
                done(result)
            }
        }
        try requireAlive(relay, after: "clawline-after-auth")
        phaseDone("clawline-after-auth")
        report.add("fuzz-clawline-after-auth", "frames_sent", Double(clawline.sent), "frames")
        report.add("fuzz-clawline-after-auth", "error_replies", Double(clawline.errors), "frames")
        report.add("fuzz-clawline-after-auth", "closes_by_relay", Double(clawline.closes), "sockets")

        var http = HTTPFuzzer()
        let requests = max(20, min(2_000, total / 50))
        let ports = [
            ("clawline", relay.clawlinePort), ("gateway", relay.gatewayPort), ("companion", relay.companionPort), ("discoclaw", relay.discoClawPort),
            ("admin", relay.adminPort),
        ]
        for (name, port) in ports {
            for (outcome, count) in http.run(port: port, count: requests).sorted(by: { $0.key < $1.key }) {
                report.add("fuzz-http-\(name)", "answered_\(outcome)", Double(count), "requests")
            }
            try requireAlive(relay, after: "http-\(name)")
            phaseDone("http-\(name)")
        }

        // A normal turn still works, then everything the clients held must be given back.
        let check = try drive(UncheckedBox([devices.value[0]]), window: 1, seconds: 0, prefix: "after")
        if check.completed == 0 { throw BenchError("fuzz: the relay did not answer a normal message afterwards") }
        for fd in held { close(fd) }
        held = []
        let settled = Date().addingTimeInterval(30)
        var fdsAfter = relay.openFileDescriptors()
        while fdsAfter > fdsBefore + Self.fdSlack, Date() < settled {
            usleep(200_000)
            fdsAfter = relay.openFileDescriptors()
        }
        let rssAfter = relay.residentBytes()
        report.add("fuzz", "relay_rss_before", Double(rssBefore) / 1024, "KiB")
        report.add("fuzz", "relay_rss_after", Double(rssAfter) / 1024, "KiB")
        report.add("fuzz", "relay_fds_before", Double(fdsBefore), "fds")
        report.add("fuzz", "relay_fds_after", Double(fdsAfter), "fds")
        report.add("fuzz", "turns_after_fuzz", Double(check.completed), "completed")
        if fdsAfter > fdsBefore + Self.fdSlack {
            throw BenchError("fuzz: the relay holds \(fdsAfter) fds 30 s after the clients left (\(fdsBefore) before)")
        }
        if rssAfter > rssBefore + Self.rssSlackBytes {
            throw BenchError("fuzz: the relay's RSS grew from \(rssBefore / 1_048_576) to \(rssAfter / 1_048_576) MiB")
        }
    }

    /// File descriptors the relay may keep beyond its starting count (the bench's own devices, lws).
    static let fdSlack = 16
    static let rssSlackBytes = 96 * 1_048_576

    private func requireAlive(_ relay: RelayProcess, after step: String) throws {
        guard relay.isRunning else { throw BenchError("fuzz: the relay died during \(step)") }
    }

    private func wireFuzz(port: Int, path: String, login: WireFuzzer.Login, seeds: [String], total: Int) throws -> WireFuzzer.Result {
        let (loop, target) = (self.loop, ServiceLoop.ClientTarget(host: "127.0.0.1", port: port, path: path))
        return try waitOnLoop(loop, timeout: 1_800) { done in
            let fuzzer = WireFuzzer(loop: loop, target: target, login: login, seeds: seeds, sockets: 8, total: total)
            fuzzer.run { result in
                _ = fuzzer
                done(result)
            }
        }
    }

    /// A Clawline socket that authenticates as `device` with a 4 KiB receive buffer and never reads.
    private func slowReader(port: Int, device: BenchDevice) -> Int32? {
        guard let token = device.token, let fd = connectLoopback(port: port) else { return nil }
        var size: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let upgrade =
            "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        let auth = JSONValue.object([
            "type": .string("auth"), "protocolVersion": .int(1), "token": .string(token), "deviceId": .string(device.deviceID),
        ]).encoded()
        let bytes = Array(upgrade.utf8) + maskedTextFrame(auth)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return fd
    }

    private func maskedTextFrame(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        let mask: [UInt8] = [1, 2, 3, 4]
        return frame + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    static let clawlineSeeds = [
        #"{"type":"pair_request","protocolVersion":1,"deviceId":"0e2d3c9a-1111-4222-8333-444455556666","claimedName":"fuzz","deviceInfo":{"platform":"iOS","model":"x"}}"#,
        #"{"type":"auth","protocolVersion":1,"token":"a.b.c","deviceId":"0e2d3c9a-1111-4222-8333-444455556666","lastMessageId":null}"#,
        #"{"type":"message","id":"c_1","content":"hi","attachments":[{"type":"image","mimeType":"image/png","data":"AAECAw=="}],"channelType":"admin"}"#,
        #"{"type":"typing","active":true}"#,
    ]

    static let gatewaySeeds = [
        #"{"type":"req","id":"1","method":"connect","params":{"minProtocol":3,"maxProtocol":4,"client":{"id":"cli","version":"1","platform":"linux","mode":"cli"},"role":"operator","scopes":["operator.read"],"device":{"id":"d","publicKey":"k","signature":"s","signedAt":1,"nonce":"n"}}}"#,
        #"{"type":"req","id":"2","method":"chat.send","params":{"sessionKey":"main","message":"hi","idempotencyKey":"k1","timeoutMs":1000}}"#,
        #"{"type":"req","id":"3","method":"chat.history","params":{"sessionKey":"main","limit":50}}"#,
        #"{"type":"req","id":"4","method":"node.invoke","params":{"nodeId":"n","command":"camera.snap","timeoutMs":3000,"idempotencyKey":"k"}}"#,
        #"{"type":"req","id":"5","method":"models.list","params":{"view":"all"}}"#,
        #"{"type":"req","id":"6","method":"device.token.rotate","params":{"deviceId":"d","role":"operator"}}"#,
    ]

    static let companionSeeds = [
        #"{"type":"claudeCommand","requestId":"r1","data":{"command":"hi","projectPath":"/tmp"}}"#,
        #"{"type":"ping","requestId":"r2"}"#,
        #"{"type":"client_backgrounding"}"#,
    ]
}
