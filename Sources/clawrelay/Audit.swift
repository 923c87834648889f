import ArgumentParser
import Foundation
import RelayCore
import RelayServer
import RelayStore

struct Audit: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Query the audit log of every frame in and out (secrets redacted).")

    @OptionGroup var options: DataOptions
    @Option(parsing: .unconditional, help: "Only entries newer than this: 30s, 10m, 2h, 7d (a leading - is allowed), or an RFC 3339 time.")
    var since: String?
    @Option(name: .customLong("device"), help: "Only this device: its id, or a prefix of 8 or more characters (the text output prints 8).")
    var deviceID: String?
    @Option(
        name: .customLong("protocol"),
        help:
            "Only this protocol: a listener (clawline, gateway, companion, discoclaw, admin), client (the relay's own upstream accounts, every kind), push (push attempts) or audit (its own notes)."
    )
    var protocolName: String?
    @Option(name: .customLong("node"), help: "A cluster node's audit (its [cluster] node_id), from the data directory it recorded in PostgreSQL.")
    var nodeID: String?

    /// Every protocol a row can be stored under.
    static let protocols = RelayConfig.listenerKinds + ["client", "push", "audit"]
    @Flag(help: "One JSON object per line.") var json = false
    @Flag(help: "Keep printing new entries until interrupted.") var follow = false
    @Option(help: "The newest this many entries, oldest first (with --follow: before following).") var limit = 10_000

    /// The time `--since` names, in epoch milliseconds: a duration ago, or an RFC 3339 time.
    static func parseSince(_ text: String, now: Int64) -> Int64? {
        if let duration = parseDuration(text.hasPrefix("-") ? String(text.dropFirst()) : text) { return now - duration }
        let formatter = ISO8601DateFormatter()
        for options: ISO8601DateFormatter.Options in [[.withInternetDateTime, .withFractionalSeconds], [.withInternetDateTime]] {
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return Int64(date.timeIntervalSince1970 * 1000) }
        }
        return nil
    }

    static func parseDuration(_ text: String) -> Int64? {
        guard let unit = text.last, let number = Int64(text.dropLast()), number >= 0 else { return Int64(text).map { $0 * 1000 } }
        switch unit {
        case "s": return number * 1000
        case "m": return number * 60_000
        case "h": return number * 3_600_000
        case "d": return number * 86_400_000
        default: return nil
        }
    }

    func validate() throws {
        if let since, Self.parseSince(since, now: 0) == nil {
            throw ValidationError("--since takes a duration such as 30s, 10m, 2h or 7d (or -5m), or an RFC 3339 time such as 2026-11-22T10:00:00Z")
        }
        if let protocolName, !Self.protocols.contains(protocolName) {
            throw ValidationError(
                "--protocol \(protocolName) is not a protocol the audit records; use one of \(Self.protocols.joined(separator: ", "))"
            )
        }
        guard limit >= 1 else { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        let sinceMillis = since.flatMap { Self.parseSince($0, now: SystemClock().nowMillis()) }
        let config = options.loadExisting()
        if protocolName == "push" { return try pushAttempts(config, since: sinceMillis) }
        let log: AuditLog
        do {
            log = try AuditLog(dataDirectory: nodeID.map(nodeDirectory) ?? config.dataDirectory, retentionDays: 0, startWriter: false)
        } catch {
            fail("\(error)")
        }
        var lastID: Int64 = 0
        var first = true
        repeat {
            // The newest `limit` first (like `journalctl -n`), then whatever follows them.
            let entries = try AuditQueries.fetch(
                log,
                since: sinceMillis,
                deviceID: deviceID,
                protocolName: protocolName,
                afterID: lastID,
                limit: first ? limit : 1000,
                newest: first
            )
            first = false
            for entry in entries {
                print(json ? Self.json(entry) : Self.line(entry))
                lastID = entry.id
            }
            fflush(nil)
            if follow && entries.isEmpty { usleep(250_000) }
        } while follow
    }

    /// The data directory cluster node `node` recorded; an unknown node fails, naming the known ones.
    private func nodeDirectory(_ node: String) -> String {
        let store = options.openStore()
        defer { store.close() }
        let directories: [String: String]
        do { directories = try store.nodeDataDirectories() } catch { fail("\(error)") }
        guard let directory = directories[node] else {
            let known = directories.keys.sorted()
            fail("no cluster node \(node) recorded its data directory; known: \(known.isEmpty ? "none" : known.joined(separator: ", "))")
        }
        return directory
    }

    /// Push attempts live in the relay's store (kept whether or not the frame audit is on).
    private func pushAttempts(_ config: RelayConfig, since: Int64?) throws {
        let store = options.openStore()
        var lastID: Int64 = 0
        var first = true
        repeat {
            let (limit, newest) = (first ? self.limit : 1000, first)
            first = false
            let rows = try store.pushAttempts(since: since, deviceID: deviceID, afterID: lastID, limit: limit, newest: newest)
            for row in rows {
                print(json ? Self.json(id: row.id, userID: row.userID, row.attempt) : Self.line(row.attempt))
                lastID = row.id
            }
            fflush(nil)
            if follow && rows.isEmpty { usleep(250_000) }
        } while follow
    }

    static func json(id: Int64, userID: String?, _ attempt: PushAttempt) -> String {
        JSONValue.object([
            "id": .int(id), "time": .int(attempt.timeMillis), "protocol": .string("push"), "direction": .string("out"),
            "deviceId": .string(attempt.deviceID), "userId": userID.map(JSONValue.string) ?? .null, "conversation": .string(attempt.conversationID),
            "sink": .string(attempt.sink), "target": .string(attempt.target), "status": .int(Int64(attempt.status)),
            "outcome": .string(attempt.outcome.rawValue), "reason": .string(attempt.reason),
        ]).encoded()
    }

    static func line(_ attempt: PushAttempt) -> String {
        let time = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(attempt.timeMillis) / 1000))
        return
            "\(time) push -> \(attempt.sink) \(attempt.target) dev=\(attempt.deviceID.prefix(8)) \(attempt.status) \(attempt.outcome.rawValue) \(attempt.reason)"
    }

    static func json(_ entry: AuditEntry) -> String {
        JSONValue.object([
            "id": .int(entry.id), "time": .int(entry.timeMillis), "connection": .int(Int64(entry.connectionID)),
            "protocol": .string(entry.protocolName), "direction": .string(entry.direction), "kind": .string(entry.kind),
            "deviceId": entry.deviceID.map(JSONValue.string) ?? .null, "userId": entry.userID.map(JSONValue.string) ?? .null,
            "opcode": .string(entry.opcode), "size": .int(Int64(entry.size)), "body": .string(entry.body),
        ]).encoded()
    }

    static func line(_ entry: AuditEntry) -> String {
        let time = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(entry.timeMillis) / 1000))
        let arrow = entry.direction == "in" ? "<-" : "->"
        let device = entry.deviceID.map { " dev=\($0.prefix(8))" } ?? ""
        // One record per line: line breaks inside a body are written as \n and \r.
        let body = entry.body.prefix(200).replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r")
        return "\(time) \(entry.protocolName) #\(entry.connectionID) \(arrow) \(entry.kind)/\(entry.opcode) \(entry.size)B\(device) \(body)"
    }
}
