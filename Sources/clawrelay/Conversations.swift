import ArgumentParser
import Foundation
import RelayCore
import RelayServer

struct Conversations: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show conversations across protocols and bind one to a backend.",
        subcommands: [List.self, Show.self, Bind.self]
    )

    /// The backend that answers the conversation's next turn (`Router.backendName`, as the turn
    /// runner picks it from the listener the conversation belongs to), and where that comes from.
    static func nextBackend(_ conversation: Conversation, _ config: RelayConfig) -> (name: String, shown: String) {
        let owner = config.owner(of: conversation)
        let name = config.namesRouter.backendName(for: conversation, policy: owner?.policy ?? TurnPolicy())
        if conversation.backend != nil { return (name, name) }
        if let owner, owner.policy.backend != nil { return (name, "\(name) ([\(owner.listener)] backend)") }
        return (name, "\(name) (the first backend)")
    }

    /// `backend` is the one the conversation is bound to (null: its protocol's default);
    /// `answeredBy` the one its next turn goes to.
    static func json(_ conversation: Conversation, config: RelayConfig, events: Int? = nil) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(conversation.id), "user": .string(conversation.userID), "title": conversation.title.map(JSONValue.string) ?? .null,
            "backend": conversation.backend.map(JSONValue.string) ?? .null, "answeredBy": .string(nextBackend(conversation, config).name),
            "keys": .array(conversation.keys.map { .string($0.description) }),
            "createdAt": .int(conversation.createdAt), "updatedAt": .int(conversation.updatedAt), "archived": .bool(conversation.archived),
        ]
        if let events { fields["events"] = .int(Int64(events)) }
        return .object(fields)
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List conversations, most recent first.")
        @OptionGroup var options: DataOptions
        @Option(help: "Only this user's conversations.") var user: String?
        @Option(help: "At most this many (1-10000).") var limit = 200
        @Flag(help: "One JSON array instead of a table.") var json = false

        func validate() throws {
            guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be 1 to 10000") }
        }

        func run() throws {
            let store = Devices.openStore(options)
            let rows = try store.conversations(userID: user, limit: limit)
            let config = options.loadServed().config
            if json { return print(JSONValue.array(rows.map { Conversations.json($0.0, config: config, events: $0.1) }).encoded()) }
            if rows.isEmpty { return print("no conversations") }
            let table = rows.map { conversation, events in
                [
                    conversation.id, conversation.userID, Conversations.nextBackend(conversation, config).shown, "\(events)",
                    ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(conversation.updatedAt) / 1000)),
                    conversation.title ?? "-", conversation.keys.map(\.description).joined(separator: ","),
                ]
            }
            TextTable.print(header: ["ID", "USER", "BACKEND", "EVENTS", "UPDATED", "TITLE", "KEYS"], rows: table)
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one conversation and its last messages.")
        @OptionGroup var options: DataOptions
        @Argument(help: "The conversation id (cv_…), or a unique prefix of 8 or more characters.") var id: String
        @Option(help: "Messages to show (1-1000).") var limit = 20
        @Flag(help: "JSON instead of text.") var json = false

        func run() throws {
            guard (1...1_000).contains(limit) else { throw ValidationError("--limit must be 1 to 1000") }
            let store = Devices.openStore(options)
            let id = TypedID.conversation(self.id, in: store)
            guard let (conversation, events, usage) = try store.conversation(id: id, events: limit).map({ ($0.conversation, $0.events, $0.usage) })
            else { fail("no conversation \(id) (clawrelay conversations list shows them)") }
            let config = options.loadServed().config
            if json {
                guard case .object(var fields) = Conversations.json(conversation, config: config) else { return }
                fields["messages"] = .array(
                    events.map {
                        .object([
                            "id": .string($0.id), "seq": .int($0.seq), "role": .string($0.role.rawValue), "content": .string($0.content),
                            "at": .int($0.timestampMillis), "note": .bool($0.isNote),
                        ])
                    }
                )
                fields["usage"] = .object([
                    "runs": .int(Int64(usage.runs)), "costUSD": usage.costUSD.map(JSONValue.double) ?? .null,
                    "inputTokens": .int(Int64(usage.inputTokens)), "outputTokens": .int(Int64(usage.outputTokens)),
                    "permissionDenials": .int(Int64(usage.permissionDenials)),
                ])
                return print(JSONValue.object(fields).encoded())
            }
            print(
                "\(conversation.id)  user \(conversation.userID)  backend \(Conversations.nextBackend(conversation, config).shown)  title \(conversation.title ?? "-")"
            )
            print("keys: \(conversation.keys.map(\.description).joined(separator: ", "))")
            if usage.runs > 0 {
                let cost = usage.costUSD.map { "$" + String(format: "%.4f", $0) } ?? "not reported"
                print(
                    "usage: \(usage.runs) run\(usage.runs == 1 ? "" : "s") reported, cost \(cost), tokens \(usage.inputTokens) in / \(usage.outputTokens) out, \(usage.permissionDenials) permission denial\(usage.permissionDenials == 1 ? "" : "s")"
                )
            }
            for event in events { print("[\(event.seq)] \(event.isNote ? "note" : event.role.rawValue): \(event.content.prefix(200))") }
        }
    }

    struct Bind: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Bind a conversation to a backend (its next turns go there).")
        @OptionGroup var options: DataOptions
        @Argument(help: "The conversation id (cv_…), or a unique prefix of 8 or more characters.") var id: String
        @Argument(help: "A [[backends]] name from the configuration.") var backend: String

        func run() throws {
            let store = Devices.openStore(options)
            let id = TypedID.conversation(self.id, in: store)
            // A running relay checks the name against its own backends and applies it at once.
            if let answer = Devices.ask(store, .bindConversation, deviceID: id, userID: backend, timeout: 3) {
                guard answer == "bound" else { fail(answer) }
                return print("\(id) is bound to \(backend)")
            }
            let (config, recorded) = options.loadServed()
            guard recorded else {
                fail("the relay is not running; pass --config with its configuration so the backend name can be checked")
            }
            let names = config.backends.map(\.name)
            guard names.contains(backend) else { fail("no backend named \(backend); configured: \(names.joined(separator: ", "))") }
            guard try store.bind(conversationID: id, backend: backend, at: SystemClock().nowMillis()) else {
                fail("no conversation \(id) (clawrelay conversations list shows them)")
            }
            print("\(id) is bound to \(backend) (the relay is not running; it applies at the next start)")
        }
    }
}
