import Foundation
import GRDB
import RelayCore
import Testing

@testable import RelayStore

/// Real frames of every protocol, through the audit writer's fast path and back out of the table.
@Suite struct AuditRedactionTests {
    /// A frame as one of the protocols sends it, and the secrets in it.
    struct Frame: CustomStringConvertible {
        let name: String
        let body: String
        let secrets: [String]
        var description: String { name }
    }

    static let jwt = HS256Token(secret: [7, 7, 7]).sign(DeviceClaims(sub: "u_1", deviceId: "d_1", isAdmin: false, iat: 0, exp: 1))
    static let hexToken = String(repeating: "0f3a", count: 16)

    /// Frames that carry a secret, one or more per protocol and direction.
    static let secretFrames: [Frame] = [
        // Clawline: auth, pairing, the upload's Authorization header, and the upstream account's auth.
        Frame(
            name: "clawline auth",
            body: #"{"type":"auth","protocolVersion":1,"token":"\#(jwt)","deviceId":"d_1","lastMessageId":null}"#,
            secrets: [jwt]
        ),
        Frame(name: "clawline pair_result", body: #"{"type":"pair_result","success":true,"token":"\#(jwt)","userId":"u_1"}"#, secrets: [jwt]),
        Frame(name: "clawline upload", body: "POST /upload\nauthorization: Bearer \(jwt)", secrets: [jwt]),
        Frame(
            name: "clawline upstream account auth",
            body: #"{"type":"auth","protocolVersion":1,"token":"acct-secret-41","deviceId":"d_relay"}"#,
            secrets: ["acct-secret-41"]
        ),
        // Gateway: connect with shared token, password, device token and signature; hello-ok; rotation; OptaPlus pairing.
        Frame(
            name: "gateway connect",
            body: #"""
                {"type":"req","id":"c1","method":"connect","params":{"minProtocol":3,"maxProtocol":3,"client":{"id":"openclaw-ios","version":"1.4","platform":"ios","mode":"ui"},"role":"operator","scopes":["operator.read","operator.write"],"auth":{"token":"gw-shared-77","deviceToken":"dtok-abc123","password":"pw-hunter2"},"device":{"id":"9f2c","publicKey":"MCowBQYDK2VwAyEA","signature":"c2lnbmF0dXJlLWJ5dGVz","signedAt":1700000000000,"nonce":"n-1"}}}
                """#,
            secrets: ["gw-shared-77", "dtok-abc123", "pw-hunter2", "c2lnbmF0dXJlLWJ5dGVz"]
        ),
        Frame(
            name: "gateway hello-ok",
            body:
                #"{"type":"res","id":"c1","ok":true,"payload":{"type":"hello-ok","protocol":3,"auth":{"deviceToken":"dtok-new-456","role":"operator","scopes":[],"issuedAtMs":1},"policy":{"maxPayload":26214400}}}"#,
            secrets: ["dtok-new-456"]
        ),
        Frame(
            name: "gateway device.token.rotate",
            body: #"{"type":"res","id":"r2","ok":true,"payload":{"deviceId":"9f2c","role":"operator","token":"rotated-789"}}"#,
            secrets: ["rotated-789"]
        ),
        Frame(
            name: "gateway device.pair",
            body:
                #"{"type":"res","id":"p1","ok":true,"payload":{"pairings":[{"botId":"b1","token":"bot-tok-1","name":"Bot","emoji":"🤖"}],"gatewayFingerprint":"fp"}}"#,
            secrets: ["bot-tok-1"]
        ),
        Frame(
            name: "gateway upstream account connect",
            body: #"{"type":"req","id":"1","method":"connect","params":{"role":"operator","auth":{"token":"upstream-gw-tok"}}}"#,
            secrets: ["upstream-gw-tok"]
        ),
        // Companion: both registerDevice shapes and a REST call's header.
        Frame(
            name: "companion registerDevice",
            body: #"{"type":"registerDevice","deviceToken":"apns-0a1b2c","deviceInfo":{"name":"iPhone"}}"#,
            secrets: ["apns-0a1b2c"]
        ),
        Frame(
            name: "companion registerDevice (app)",
            body: #"{"type":"registerDevice","token":"apns-3d4e5f","platform":"ios"}"#,
            secrets: ["apns-3d4e5f"]
        ),
        Frame(name: "companion REST", body: "POST /ask\nauthorization: Bearer companion-secret-1", secrets: ["companion-secret-1"]),
        // DiscoClaw: register (setup token), its reply, a new device's token, and an upstream account's REST call.
        Frame(name: "discoclaw register", body: #"{"name":"Phone","platform":"ios","setupToken":"setup-secret-1"}"#, secrets: ["setup-secret-1"]),
        Frame(name: "discoclaw register reply", body: #"{"userId":"u_1","deviceId":"d_2","token":"\#(hexToken)"}"#, secrets: [hexToken]),
        Frame(name: "discoclaw auth/devices reply", body: #"{"deviceId":"d_3","token":"\#(hexToken)"}"#, secrets: [hexToken]),
        Frame(name: "discoclaw upstream account REST", body: "GET /auth/me\nauthorization: Bearer \(hexToken)", secrets: [hexToken]),
        // Any key case, non-ASCII text around the secret, and a JWT under an innocent key.
        Frame(name: "upper-case key", body: #"{"AUTHORIZATION":"Basic dXNlcjpwYXNz"}"#, secrets: ["dXNlcjpwYXNz"]),
        Frame(name: "non-ASCII with a token", body: #"{"content":"héllo 👋","token":"emoji-secret"}"#, secrets: ["emoji-secret"]),
        Frame(name: "JWT under any key", body: #"{"type":"message","content":"\#(jwt)"}"#, secrets: [jwt]),
    ]

    /// Frames with nothing to redact: stored exactly as sent.
    static let plainFrames: [String] = [
        #"{"type":"message","id":"c_1","content":"hello","attachments":[]}"#,
        #"{"type":"ack","id":"c_1","serverId":"s_0193"}"#,
        #"{"type":"event","event":"chat","payload":{"state":"delta","message":{"content":"héllo 👋"}}}"#,
        "/ws",
        "",
    ]

    @Test(arguments: secretFrames) func everySecretFrameIsScanned(frame: Frame) {
        #expect(Redactor.mightHoldSecret(Array(frame.body.utf8)))
    }

    @Test func secretsNeverReachTheTable() throws {
        let rows = try roundTrip(Self.secretFrames.map(\.body))
        try #require(rows.count == Self.secretFrames.count)
        for (frame, row) in zip(Self.secretFrames, rows) {
            for secret in frame.secrets {
                #expect(!row.body.contains(secret), "\(frame.name): \(row.body)")
            }
            #expect(row.body.contains("sha256:"), "\(frame.name)")
            #expect(row.body == Redactor.redact(Array(frame.body.utf8)), "\(frame.name)")
        }
    }

    @Test func plainFramesAreStoredVerbatim() throws {
        let rows = try roundTrip(Self.plainFrames)
        #expect(rows.map(\.body) == Self.plainFrames)
        #expect(rows.map(\.deviceID) == Array(repeating: "d_1", count: Self.plainFrames.count))
        #expect(rows.allSatisfy { $0.protocolName == "clawline" && $0.direction == "in" && $0.opcode == "text" && $0.connectionID == 7 })
    }

    @Test func batchesLongerThanAStatementKeepTheirOrder() throws {
        // Three full multi-row statements and a tail of single rows, secrets mixed in.
        let bodies = (0..<(3 * AuditInsert.chunk + 5)).map { index in
            index % 7 == 3 ? Self.secretFrames[index % Self.secretFrames.count].body : #"{"type":"message","n":\#(index)}"#
        }
        let rows = try roundTrip(bodies)
        #expect(rows.map(\.body) == bodies.map { Redactor.redact(Array($0.utf8)) })
        #expect(rows.map(\.id) == rows.map(\.id).sorted())
        for (index, row) in rows.enumerated() where index % 7 == 3 {
            for secret in Self.secretFrames[index % Self.secretFrames.count].secrets { #expect(!row.body.contains(secret)) }
        }
    }

    @Test func aNulByteEndsTheStoredBodyAsBefore() throws {
        // GRDB bound bodies as C strings; the direct binding keeps that, with or without a secret word.
        let rows = try roundTrip(["ab\u{0}cd", "{\"x\":1}\u{0}token=abc"])
        #expect(rows.map(\.body) == ["ab", #"{"x":1}"#])
    }

    @Test func longBodiesAreCutAndStillRedacted() throws {
        let long = #"{"token":"cut-secret","content":""# + String(repeating: "x", count: 20_000) + #""}"#
        let rows = try roundTrip([String(repeating: "y", count: 20_000), long])
        #expect(rows[0].body.hasSuffix("…(20000 bytes)"))
        #expect(!rows[1].body.contains("cut-secret"))
    }

    @Test func theTableHasNoSecondaryIndexAndTheFileIsPrivate() throws {
        let temp = try TemporaryStore()
        let log = try AuditLog(dataDirectory: temp.directory, retentionDays: 0, startWriter: false)
        let indexes = try log.pool.read { db in try String.fetchAll(db, sql: "SELECT name FROM pragma_index_list('audit') ORDER BY name") }
        #expect(indexes == [])
        let mode = try FileManager.default.attributesOfItem(atPath: log.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func sinceAndRetentionFindTheirFirstRowByTheRowid() throws {
        let temp = try TemporaryStore()
        let log = try AuditLog(dataDirectory: temp.directory, retentionDays: 0, startWriter: true)
        let times: [Int64] = [10, 10, 20, 30, 30, 30, 40, 55]
        for (index, time) in times.enumerated() {
            log.append(
                AuditEntry(
                    timeMillis: time,
                    connectionID: UInt64(index),
                    protocolName: "clawline",
                    direction: "in",
                    kind: "ws",
                    deviceID: "d_1",
                    userID: nil,
                    opcode: "text",
                    size: 5,
                    body: ""
                ),
                raw: Array("row \(index)".utf8)
            )
        }
        log.close()
        let reader = try AuditLog(dataDirectory: temp.directory, retentionDays: 0, startWriter: false)
        func since(_ time: Int64, after id: Int64 = 0) throws -> [Int64] {
            try AuditQueries.fetch(reader, since: time, deviceID: nil, protocolName: nil, afterID: id, limit: 100).map(\.timeMillis)
        }
        #expect(try since(0) == times)
        #expect(try since(10) == times)
        #expect(try since(11) == [20, 30, 30, 30, 40, 55])
        #expect(try since(30) == [30, 30, 30, 40, 55])
        #expect(try since(31) == [40, 55])
        #expect(try since(55) == [55])
        #expect(try since(56) == [])
        let all = try AuditQueries.fetch(reader, since: nil, deviceID: nil, protocolName: nil, afterID: 0, limit: 100)
        #expect(try since(20, after: all[4].id) == [30, 40, 55], "a later page of the same listing")

        try reader.pool.write { try AuditQueries.prune($0, before: 30) }
        #expect(try since(0) == [30, 30, 30, 40, 55])
        try reader.pool.write { try AuditQueries.prune($0, before: 10) }
        #expect(try since(0) == [30, 30, 30, 40, 55], "nothing older left")
        try reader.pool.write { try AuditQueries.prune($0, before: 100) }
        #expect(try since(0) == [])
        try reader.pool.write { try AuditQueries.prune($0, before: 100) }
    }

    /// Writes `bodies` through a running audit writer and reads them back with `clawrelay audit`'s query.
    private func roundTrip(_ bodies: [String]) throws -> [AuditEntry] {
        let temp = try TemporaryStore()
        let log = try AuditLog(dataDirectory: temp.directory, retentionDays: 1, startWriter: true)
        for body in bodies {
            log.append(
                AuditEntry(
                    timeMillis: SystemClock().nowMillis(),
                    connectionID: 7,
                    protocolName: "clawline",
                    direction: "in",
                    kind: "ws",
                    deviceID: "d_1",
                    userID: nil,
                    opcode: "text",
                    size: body.utf8.count,
                    body: ""
                ),
                raw: Array(body.utf8)
            )
        }
        log.close()
        let reader = try AuditLog(dataDirectory: temp.directory, retentionDays: 0, startWriter: false)
        return try AuditQueries.fetch(reader, since: nil, deviceID: "d_1", protocolName: "clawline", afterID: 0, limit: 1000)
    }
}
