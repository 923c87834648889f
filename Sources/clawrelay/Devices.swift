import ArgumentParser
import Foundation
import RelayCore
import RelayServer
import RelayStore

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, approve, deny or revoke devices, or make one an admin (works while the relay runs).",
        subcommands: [List.self, Approve.self, Deny.self, Revoke.self, Admin.self], defaultSubcommand: List.self)

    static func openStore(_ options: DataOptions) -> Store {
        let config = options.loadExisting()
        do {
            return try Store(dataDirectory: config.dataDirectory, executor: nil)
        } catch {
            fail("\(error)")
        }
    }

    /// Queues a command for the running relay and waits for its answer.
    static func ask(_ store: Store, _ action: OperatorCommand.Action, deviceID: String, userID: String?, timeout: Double = 5) -> String? {
        do {
            let id = try store.write { try OperatorQueries.enqueue($0, action: action, deviceID: deviceID, userID: userID, at: SystemClock().nowMillis()) }
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if let result = try store.read({ try OperatorQueries.result($0, id: id) }) { return result }
                usleep(50_000)
            }
        } catch {
            fail("\(error)")
        }
        return nil
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show paired and pending devices.")
        @OptionGroup var options: DataOptions
        @Flag(help: "One JSON array instead of a table.") var json = false

        func run() throws {
            let store = Devices.openStore(options)
            let now = SystemClock().nowMillis()
            let (devices, pending, depths) = try store.read { db in
                (try DeviceQueries.all(db), try OperatorQueries.pendingPairings(db), try QueueQueries.depths(db, at: now))
            }
            var rows: [JSONValue] = devices.map { device in
                .object([
                    "deviceId": .string(device.id), "userId": .string(device.userID), "protocol": .string(device.protocolName),
                    "claimedName": device.claimedName.map(JSONValue.string) ?? .null, "isAdmin": .bool(device.isAdmin),
                    "status": .string(device.status.rawValue), "tokenDelivered": .bool(device.tokenDelivered),
                    "createdAt": .int(device.createdAt), "lastSeenAt": device.lastSeenAt.map(JSONValue.int) ?? .null,
                    "presence": .string(device.presence), "queued": .int(Int64(depths[device.id] ?? 0)),
                ])
            }
            rows += pending.map { entry in
                .object([
                    "deviceId": .string(entry.deviceID), "userId": .null, "protocol": .string(entry.protocolName),
                    "claimedName": entry.claimedName.map(JSONValue.string) ?? .null, "isAdmin": .bool(false), "status": .string("pending"),
                    "tokenDelivered": .bool(false), "createdAt": .int(entry.createdAt), "lastSeenAt": .null, "expiresAt": .int(entry.expiresAt),
                ])
            }
            if json {
                print(JSONValue.array(rows).encoded())
                return
            }
            if rows.isEmpty { print("no devices") }
            for row in rows {
                let admin = row["isAdmin"]?.boolValue == true ? " admin" : ""
                let name = row["claimedName"]?.stringValue.map { " \"\($0)\"" } ?? ""
                let presence = row["presence"]?.stringValue.map { "  \($0)" } ?? ""
                let queued = (row["queued"]?.intValue ?? 0) > 0 ? "  queued=\(row["queued"]?.intValue ?? 0)" : ""
                print(
                    "\(row["deviceId"]?.stringValue ?? "")  \(row["protocol"]?.stringValue ?? "")  \(row["status"]?.stringValue ?? "")\(admin)\(presence)\(queued)  user=\(row["userId"]?.stringValue ?? "-")\(name)")
            }
        }
    }

    struct Approve: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Approve a pending pairing request on the running relay.")
        @OptionGroup var options: DataOptions
        @Argument(help: "The pending device id.") var deviceID: String
        @Option(name: .customLong("user"), help: "Attach the device to this user id (default: a new user).") var userID: String?

        func run() throws {
            if let userID, !Identifiers.isUUIDv4(userID) { fail("--user must be a UUIDv4") }
            let store = Devices.openStore(options)
            guard let result = Devices.ask(store, .approve, deviceID: deviceID, userID: userID) else {
                fail("no running relay answered; pending requests exist only inside a running relay")
            }
            guard result.hasPrefix("approved") else { fail(result) }
            print("\(deviceID): \(result)")
        }
    }

    struct Deny: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Deny a pending request, or denylist a paired device.")
        @OptionGroup var options: DataOptions
        @Argument(help: "The device id.") var deviceID: String

        func run() throws {
            let store = Devices.openStore(options)
            let known = try store.write { try DeviceQueries.setStatus($0, id: deviceID, .denied) }
            let result = Devices.ask(store, .deny, deviceID: deviceID, userID: nil, timeout: known ? 2 : 5)
            if !known && result == nil { fail("no such device, and no running relay has a pending request for it") }
            if let result, result.hasPrefix("no pending") { fail(result) }
            print("\(deviceID): \(known ? "denylisted" : result ?? "denied")")
        }
    }

    struct Admin: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a paired device an admin (it approves pairings and shares the Clawline admin channel), or not.")
        @OptionGroup var options: DataOptions
        @Argument(help: "The device id.") var deviceID: String
        @Flag(name: .customLong("remove"), help: "Take admin away instead.") var remove = false

        func run() throws {
            let store = Devices.openStore(options)
            guard try store.write({ try DeviceQueries.setAdmin($0, id: deviceID, !remove) }) else {
                fail("no approved device \(deviceID); see `clawrelay devices list`")
            }
            // A running relay moves the device's live sockets into (or out of) the admin channel.
            _ = Devices.ask(store, .refresh, deviceID: deviceID, userID: nil, timeout: 2)
            print("\(deviceID): \(remove ? "no longer an admin" : "admin")")
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a device's token and close its live sockets.")
        @OptionGroup var options: DataOptions
        @Argument(help: "The device id.") var deviceID: String

        func run() throws {
            let store = Devices.openStore(options)
            guard try store.write({ try DeviceQueries.setStatus($0, id: deviceID, .revoked) }) else { fail("no such device: \(deviceID)") }
            _ = Devices.ask(store, .revoke, deviceID: deviceID, userID: nil, timeout: 2)
            print("\(deviceID): revoked")
        }
    }
}
