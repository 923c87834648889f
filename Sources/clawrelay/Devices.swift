import ArgumentParser
import Foundation
import RelayCore
import RelayServer

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, approve, deny or revoke devices, or make one an admin (works while the relay runs).",
        subcommands: [List.self, Approve.self, Deny.self, Allow.self, Revoke.self, Admin.self, Push.self],
        defaultSubcommand: List.self
    )

    static func openStore(_ options: DataOptions) -> any OperatorStore { options.openStore() }

    /// Queues a command for the running relay and waits for its answer.
    static func ask(_ store: any OperatorStore, _ action: OperatorCommand.Action, deviceID: String, userID: String?, timeout: Double = 5) -> String? {
        do {
            let id = try store.enqueue(action, deviceID: deviceID, userID: userID, at: SystemClock().nowMillis())
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if let result = try store.result(ofCommand: id) { return result }
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

        /// The push column: live targets, retired ones marked (`apns:…9f3a (retired 2h ago: BadDeviceToken)`).
        static func push(_ value: JSONValue?, now: Int64) -> String {
            let entries = value?.arrayValue ?? []
            guard !entries.isEmpty else { return "-" }
            return entries.map { entry in
                let target = entry["target"]?.stringValue ?? "?"
                guard let retired = entry["retiredAt"]?.intValue else { return target }
                return "\(target) (retired \(age(now - retired)): \(entry["retiredReason"]?.stringValue ?? "?"))"
            }.joined(separator: ", ")
        }

        /// "12s ago", "5m ago", "3h ago", "2d ago".
        static func age(_ millis: Int64) -> String {
            let seconds = max(0, millis / 1000)
            switch seconds {
            case ..<60: return "\(seconds)s ago"
            case ..<3600: return "\(seconds / 60)m ago"
            case ..<86_400: return "\(seconds / 3600)h ago"
            default: return "\(seconds / 86_400)d ago"
            }
        }

        /// A stored device's row (`presence` is the relay's column; a cluster's listing replaces it).
        static func row(of device: DeviceRecord, queued: Int, push: [PushTargetListing]) -> [String: JSONValue] {
            [
                "deviceId": .string(device.id), "userId": device.userID.isEmpty ? .null : .string(device.userID),
                "protocol": .string(device.protocolName),
                "claimedName": device.claimedName.map(JSONValue.string) ?? .null, "isAdmin": .bool(device.isAdmin),
                "status": .string(device.status.rawValue), "tokenDelivered": .bool(device.tokenDelivered),
                "createdAt": .int(device.createdAt), "lastSeenAt": device.lastSeenAt.map(JSONValue.int) ?? .null,
                "presence": .string(device.presence), "queued": .int(Int64(queued)),
                "push": .array(
                    push.map { entry in
                        .object([
                            "target": .string(entry.target), "retiredAt": entry.retiredAt.map(JSONValue.int) ?? .null,
                            "retiredReason": entry.reason.map(JSONValue.string) ?? .null,
                        ])
                    }
                ),
            ]
        }

        /// "foreground", or in a cluster "foreground (relay-a)": the nodes where it is that present.
        static func presence(of row: JSONValue) -> String {
            let state = row["presence"]?.stringValue ?? "-"
            guard case .object(let nodes)? = row["presenceNodes"] else { return state }
            let holding = nodes.filter { $0.value.stringValue == state }.keys.sorted()
            return holding.isEmpty ? state : "\(state) (\(holding.joined(separator: ", ")))"
        }

        func run() throws {
            let store = Devices.openStore(options)
            let now = SystemClock().nowMillis()
            let (devices, pending, depths, targets) = (
                try store.devices(), try store.pendingPairings(), try store.queueDepths(at: now), try store.pushTargetListing()
            )
            // In a cluster each live node says where the device is present; the column is whichever node wrote last.
            let cluster = try store.clusterPresence()
            var rows: [JSONValue] = devices.map { device in
                var row = Self.row(of: device, queued: depths[device.id] ?? 0, push: targets[device.id] ?? [])
                if let cluster {
                    let presence = cluster[device.id] ?? ClusterPresence(nodes: [:])
                    row["presence"] = .string(presence.state.rawValue)
                    row["presenceNodes"] = .object(presence.nodes.mapValues { .string($0.rawValue) })
                }
                return .object(row)
            }
            // One row per device: a known device that asks to pair again shows as pending.
            for entry in pending {
                let waiting: [String: JSONValue] = [
                    "status": .string("pending"), "expiresAt": .int(entry.expiresAt), "reason": entry.reason.map(JSONValue.string) ?? .null,
                ]
                if let index = rows.firstIndex(where: { $0["deviceId"]?.stringValue == entry.deviceID }), case .object(var row) = rows[index] {
                    row.merge(waiting) { $1 }
                    rows[index] = .object(row)
                    continue
                }
                rows.append(
                    .object(
                        waiting.merging([
                            "deviceId": .string(entry.deviceID), "userId": .null, "protocol": .string(entry.protocolName),
                            "claimedName": entry.claimedName.map(JSONValue.string) ?? .null, "isAdmin": .bool(false),
                            "tokenDelivered": .bool(false), "createdAt": .int(entry.createdAt), "lastSeenAt": .null,
                        ]) { $1 }
                    )
                )
            }
            if json {
                print(JSONValue.array(rows).encoded())
                return
            }
            if rows.isEmpty {
                print("no devices")
                return
            }
            let header = ["DEVICE", "PROTOCOL", "STATUS", "PRESENCE", "LAST SEEN", "QUEUED", "PUSH", "USER", "NAME"]
            let table = rows.map { row -> [String] in
                let reason = row["reason"]?.stringValue.map { " (\($0))" } ?? ""
                let status = (row["status"]?.stringValue ?? "") + reason + (row["isAdmin"]?.boolValue == true ? " admin" : "")
                let lastSeen = row["lastSeenAt"]?.intValue.map { Self.age(now - $0) } ?? "-"
                return [
                    row["deviceId"]?.stringValue ?? "", row["protocol"]?.stringValue ?? "", status, Self.presence(of: row), lastSeen,
                    "\(row["queued"]?.intValue ?? 0)", Self.push(row["push"], now: now), row["userId"]?.stringValue ?? "-",
                    row["claimedName"]?.stringValue ?? "",
                ]
            }
            TextTable.print(header: header, rows: table)
        }
    }

    struct Push: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give a device a push target (APNs token or ntfy topic), or take one away (works while the relay runs)."
        )
        @OptionGroup var options: DataOptions
        @Argument(help: "The device id, or a unique prefix of 8 or more characters.") var deviceID: String
        @Option(help: "The device's APNs token, in hex.") var apns: String?
        @Option(help: "An ntfy topic URL (https://ntfy.sh/my-topic), or a topic on [push] ntfy_url.") var ntfy: String?
        @Option(help: "Remove the device's target of this kind: apns or ntfy.") var remove: String?

        func validate() throws {
            let given = [apns != nil, ntfy != nil, remove != nil].filter { $0 }.count
            guard given == 1 else { throw ValidationError("give exactly one of --apns TOKEN, --ntfy URL or --remove apns|ntfy") }
            if let apns, !PushTarget.isAPNsToken(apns) { throw ValidationError("--apns takes the device's APNs token in hex (64 characters)") }
            if let ntfy {
                let isURL = PushTarget.origin(of: ntfy) != nil
                let isTopic = !ntfy.isEmpty && ntfy.count <= 64 && ntfy.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
                guard (isURL && ntfy.count <= 512) || isTopic else {
                    throw ValidationError("--ntfy takes an http(s) topic URL or a topic name (letters, digits, - and _)")
                }
            }
            if let remove, PushTarget.Kind(rawValue: remove) == nil { throw ValidationError("--remove takes apns or ntfy") }
        }

        func run() throws {
            let store = Devices.openStore(options)
            let deviceID = TypedID.device(self.deviceID, in: store)
            let now = SystemClock().nowMillis()
            let (kind, token) = apns.map { ("apns", $0.lowercased()) } ?? ("ntfy", ntfy ?? "")
            let done =
                try remove.map { try store.removePushTarget(deviceID: deviceID, kind: $0) }
                ?? store.setPushTarget(deviceID: deviceID, kind: kind, token: token, at: now)
            guard done else {
                fail(remove != nil ? "\(deviceID) has no \(remove!) target" : "no approved device \(deviceID); see `clawrelay devices list`")
            }
            // A running relay re-reads the device's targets.
            _ = Devices.ask(store, .refresh, deviceID: deviceID, userID: nil, timeout: 2)
            print("\(deviceID): " + (remove.map { "\($0) target removed" } ?? (apns != nil ? "pushes go to APNs" : "pushes go to ntfy")))
        }
    }

    struct Approve: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Approve a pending pairing request on the running relay.")
        @OptionGroup var options: DataOptions
        @Argument(help: "The pending device id, or a unique prefix of 8 or more characters.") var deviceID: String
        @Option(name: .customLong("user"), help: "Attach the device to this user id (default: a new user).") var userID: String?

        func validate() throws {
            if let userID, !Identifiers.isUUIDv4(userID) { throw ValidationError("--user must be a UUIDv4") }
        }

        func run() throws {
            let store = Devices.openStore(options)
            let deviceID = TypedID.device(self.deviceID, in: store)
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
        @Argument(help: "The device id, or a unique prefix of 8 or more characters.") var deviceID: String

        func run() throws {
            let store = Devices.openStore(options)
            let deviceID = TypedID.device(self.deviceID, in: store)
            let known = try store.setStatus(deviceID: deviceID, .denied)
            let result = Devices.ask(store, .deny, deviceID: deviceID, userID: nil, timeout: known ? 2 : 5)
            // Unknown ids are refused: a denial only means something for a paired device or a pending request.
            guard known || result == "denied" else {
                fail("no paired device and no pending request with id \(deviceID); nothing was denied (see clawrelay devices list)")
            }
            print("\(deviceID): \(known ? "denylisted (undo with: clawrelay devices allow \(deviceID))" : "pairing request denied")")
        }
    }

    struct Allow: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Undo a denial (the device connects again with its token) or a revocation (it may ask to pair again)."
        )
        @OptionGroup var options: DataOptions
        @Argument(help: "The device id, or a unique prefix of 8 or more characters.") var deviceID: String

        func run() throws {
            let store = Devices.openStore(options)
            let deviceID = TypedID.device(self.deviceID, in: store)
            guard let was = try store.allow(deviceID: deviceID) else {
                fail("\(deviceID) is neither revoked nor denylisted (see clawrelay devices list)")
            }
            // A running relay's bridges follow the record (a Companion device may connect again).
            _ = Devices.ask(store, .refresh, deviceID: deviceID, userID: nil, timeout: 2)
            guard was.status == .revoked else { return print("\(deviceID): allowed again") }
            switch was.protocolName {
            case "companion": print("\(deviceID): may connect again")
            case "discoclaw": print("\(deviceID): no longer revoked; its token stays void (the app registers again with the setup token)")
            default: print("\(deviceID): may ask to pair again; approve its next request with: clawrelay devices approve \(deviceID)")
            }
        }
    }

    struct Admin: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a paired device an admin (it approves pairings and shares the Clawline admin channel), or not."
        )
        @OptionGroup var options: DataOptions
        @Argument(help: "The device id, or a unique prefix of 8 or more characters.") var deviceID: String
        @Flag(name: .customLong("remove"), help: "Take admin away instead.") var remove = false

        func run() throws {
            let store = Devices.openStore(options)
            let deviceID = TypedID.device(self.deviceID, in: store)
            guard try store.setAdmin(deviceID: deviceID, !remove) else {
                fail("no approved device \(deviceID); see `clawrelay devices list`")
            }
            // A running relay moves the device's live sockets into (or out of) the admin channel.
            _ = Devices.ask(store, .refresh, deviceID: deviceID, userID: nil, timeout: 2)
            print("\(deviceID): \(remove ? "no longer an admin" : "admin")")
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a device (paired, or waiting for approval): its sockets close and it may not pair again until `devices allow`."
        )
        @OptionGroup var options: DataOptions
        @Argument(help: "The device id, or a unique prefix of 8 or more characters.") var deviceID: String

        func run() throws {
            let store = Devices.openStore(options)
            let deviceID = TypedID.device(self.deviceID, in: store)
            // Stored first, so the revocation holds without a running relay; the relay revokes a
            // pending request too, and closes the device's sockets.
            let known = try store.setStatus(deviceID: deviceID, .revoked)
            let result = Devices.ask(store, .revoke, deviceID: deviceID, userID: nil, timeout: known ? 2 : 5)
            guard known || result == "revoked" else {
                fail("no device and no pending request with id \(deviceID); nothing was revoked (see clawrelay devices list)")
            }
            print("\(deviceID): revoked (undo with: clawrelay devices allow \(deviceID))")
        }
    }
}
