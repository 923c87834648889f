import Foundation
import Logging
import RelayCore
import RelayStore
import Testing

@testable import RelayStorePostgres

/// `SQLiteToPostgres`: a SQLite store filled through its journal, copied into a real PostgreSQL
/// database, read back through `PostgresJournal`.
@Suite(.timeLimit(.minutes(2))) struct SQLiteToPostgresTests {
    /// A relay's SQLite store in a temporary data directory.
    final class SQLiteRelay {
        let directory = NSTemporaryDirectory() + "clawrelay-migrate-" + UUID().uuidString
        let store: Store
        let journal: StoreJournal

        init() throws {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            store = try Store(dataDirectory: directory, executor: QueueLoop())
            journal = StoreJournal(store: store) { what, error in Issue.record("\(what): \(error)") }
        }

        deinit {
            store.close()
            try? FileManager.default.removeItem(atPath: directory)
        }

        /// Copies the store into `database` on a thread of its own.
        func copy(into database: TestDatabase) async throws -> [SQLiteToPostgres.TableCount] {
            let (store, settings, logger) = (store, database.settings, database.logger)
            return try await BlockingWork.run {
                try SQLiteToPostgres.copy(from: store, to: settings, now: 9_000, maxAssetBytes: 1 << 20, logger: logger)
            }
        }
    }

    /// What a client sees of an event, for comparing the two stores.
    static func seen(_ events: [ChatEvent]) -> [String] {
        events.map { "\($0.id) \($0.seq) \($0.role) \($0.isNote) \($0.timestampMillis) \($0.deviceID ?? "-") \($0.conversationID) \($0.content)" }
    }

    /// Device d1's message `clientID` to `conversation`.
    static func send(
        _ journal: some RelayJournal,
        _ clientID: String,
        _ content: String,
        to conversation: Conversation,
        at millis: Int64,
        queue: [QueueTarget] = []
    ) async throws -> Acceptance {
        let message = UserMessage(conversationID: conversation.id, userID: conversation.userID, deviceID: "d1", clientID: clientID, content: content)
        return try await awaiting { journal.accept(message, now: millis, queue: queue, completion: $0) }
    }

    /// A paired device with a token, a conversation with history (an answer, a failed turn, a
    /// note), a read cursor, a push target, an account, an asset and a queued entry.
    static func fill(_ journal: some RelayJournal) async throws -> Conversation {
        let device = {
            var device = deviceRecord("d1", user: "u1", protocolName: "clawline", createdAt: 500)
            device.tokenHash = "hash-d1"
            device.lastSeenAt = 600
            return device
        }()
        let token = DeviceToken(deviceID: "d1", role: "operator", tokenHash: "hash-op", scopes: ["a", "b"], issuedAt: 700)
        try await awaiting {
            journal.updateDevice(
                DeviceSnapshot.Request(deviceID: "d1"),
                {
                    $0.device = device
                    $0.tokens["operator"] = token
                },
                completion: $0
            )
        }
        let conversation = try await awaiting {
            journal.resolveConversation(.session("main"), userID: "u1", draft: ConversationDraft(title: "plans"), now: 1_000, completion: $0)
        }
        let away = [QueueTarget(deviceID: "d2", ttlMillis: 60_000, capacity: 10)]
        let first = try await Self.send(journal, "c1", "hello", to: conversation, at: 2_000, queue: away)
        guard case .fresh(let question, let runID, let slot) = first else { throw FixtureError("not fresh: \(first)") }
        let turn = TurnRef(runID: runID, deviceID: "d1", clientID: "c1")
        _ = try await awaiting {
            journal.finish(
                turn,
                userID: "u1",
                conversationID: conversation.id,
                eventID: slot.id,
                content: "hi",
                now: 3_000,
                queue: away,
                completion: $0
            )
        }
        _ = try await awaiting {
            journal.note(userID: "@admins", conversationID: "shared", content: "to admins", now: 3_400, queue: [], completion: $0)
        }
        let second = try await Self.send(journal, "c2", "again", to: conversation, at: 3_500)
        guard case .fresh(_, let secondRun, let secondSlot) = second else { throw FixtureError("not fresh: \(second)") }
        // A failure names its answer's placeholder, as the core's do (a queue reads it back from the log).
        let failure = TurnFailure(
            turn: TurnRef(runID: secondRun, deviceID: "d1", clientID: "c2"),
            conversationID: conversation.id,
            userID: "u1",
            cause: .failed,
            reason: "boom",
            timestampMillis: 3_700,
            answerID: secondSlot.id
        )
        _ = try await awaiting { journal.fail(failure, queue: away, completion: $0) }
        _ = try await awaiting {
            journal.note(userID: "u1", conversationID: conversation.id, content: "a note", now: 3_800, queue: [], completion: $0)
        }
        _ = try await awaiting { journal.markRead(userID: "u1", conversationID: conversation.id, seq: question.seq, now: 4_000, completion: $0) }
        try await awaiting { journal.savePushTarget(deviceID: "d1", kind: .ntfy, token: "topic", platform: "android", at: 5_000, completion: $0) }
        try await awaiting {
            journal.saveAsset(
                AssetRecord(id: "as1", userID: "u1", mimeType: "image/png", size: 42, path: "/a/b.png", createdAt: 6_000),
                completion: $0
            )
        }
        journal.recordAccount(AccountStatus(name: "claude-1", kind: "claude", state: "ready", detail: "ok", updatedAt: 7_000))
        await awaitingDone { journal.barrier($0) }
        return conversation
    }

    @Test func aCopiedStoreReadsBackWithItsIDsSeqsAndTimes() async throws {
        let sqlite = try SQLiteRelay()
        let conversation = try await Self.fill(sqlite.journal)
        // An upload whose file is there: its bytes go into the database too (as1's file is missing).
        let upload = NSTemporaryDirectory() + "upload-\(UUID().uuidString).png"
        defer { try? FileManager.default.removeItem(atPath: upload) }
        try Data("png-bytes".utf8).write(to: URL(fileURLWithPath: upload))
        try await awaiting {
            sqlite.journal.saveAsset(
                AssetRecord(id: "as2", userID: "u1", mimeType: "image/png", size: 9, path: upload, createdAt: 6_100),
                completion: $0
            )
        }
        let database = try await TestDatabase(migrate: false)
        let counts = try await sqlite.copy(into: database)
        #expect(counts.first { $0.table == "events" }?.rows == 6, "\(counts)")
        #expect(counts.first { $0.table == "queue_entries" }?.rows == 3, "\(counts)")
        #expect(counts.last == SQLiteToPostgres.TableCount(table: "asset_bytes", rows: 1), "\(counts)")
        #expect(try await database.strings("SELECT asset_id || ' ' || convert_from(bytes, 'UTF8') FROM asset_bytes") == ["as2 png-bytes"])

        let writer = database.writer(for: NodeIncarnation(node: "n1"))
        let postgres = PostgresJournal(writer: writer, logger: database.logger) { what, error in Issue.record("\(what): \(error)") }
        let before = try await awaiting { sqlite.journal.replay(audiences: ["u1"], after: nil, limit: 100, completion: $0) }
        let after = try await awaiting { postgres.replay(audiences: ["u1"], after: nil, limit: 100, completion: $0) }
        #expect(before.events.count == 4 && Self.seen(after.events) == Self.seen(before.events))
        #expect(after.highWater == before.highWater)
        // Several streams replay merged in the order SQLite wrote them.
        let mergedBefore = try await awaiting { sqlite.journal.replay(audiences: ["u1", "@admins"], after: nil, limit: 100, completion: $0) }
        let mergedAfter = try await awaiting { postgres.replay(audiences: ["u1", "@admins"], after: nil, limit: 100, completion: $0) }
        #expect(Self.seen(mergedAfter.events) == Self.seen(mergedBefore.events) && mergedBefore.events.count == 5)
        #expect(mergedBefore.events.map(\.content)[2] == "to admins", "the admins' note between the exchanges")
        // The timeline joins events to their message records by run: the failed turn is there too.
        let syncBefore = try await awaiting { sqlite.journal.timelineSync(userID: "u1", after: 0, limit: 100, byteBudget: 1 << 20, completion: $0) }
        let syncAfter = try await awaiting { postgres.timelineSync(userID: "u1", after: 0, limit: 100, byteBudget: 1 << 20, completion: $0) }
        #expect(syncAfter == syncBefore && syncBefore.entries.count == 5, "\(syncAfter.entries)\n\(syncBefore.entries)")

        let device = try await awaiting { postgres.device(id: "d1", completion: $0) }
        #expect(device == (try await awaiting { sqlite.journal.device(id: "d1", completion: $0) }))
        let snapshot = try await awaiting { postgres.updateDevice(DeviceSnapshot.Request(deviceID: "d1"), { $0.tokens }, completion: $0) }
        #expect(snapshot["operator"]?.tokenHash == "hash-op" && snapshot["operator"]?.scopes == ["a", "b"] && snapshot["operator"]?.issuedAt == 700)
        let conversationBefore = try await awaiting { sqlite.journal.conversation(id: conversation.id, completion: $0) }
        let conversationAfter = try await awaiting { postgres.conversation(id: conversation.id, completion: $0) }
        #expect(conversationAfter == conversationBefore)
        let push = try await awaiting { postgres.pushDevice("d1", completion: $0) }
        #expect(push == (try await awaiting { sqlite.journal.pushDevice("d1", completion: $0) }))
        let asset = try await awaiting { postgres.asset(id: "as1", completion: $0) }
        #expect(asset?.path == "/a/b.png" && asset?.createdAt == 6_000 && asset?.size == 42)
        let queuedBefore = try await awaiting { sqlite.journal.queued(deviceID: "d2", conversations: nil, now: 9_000, completion: $0) }
        let queuedAfter = try await awaiting { postgres.queued(deviceID: "d2", conversations: nil, now: 9_000, completion: $0) }
        #expect(queuedAfter.map(\.item) == queuedBefore.map(\.item) && queuedAfter.map(\.queuedAt) == [2_000, 3_000, 3_700])
        #expect(try await database.strings("SELECT name || ' ' || state || ' ' || updated_ms FROM accounts") == ["claude-1 ready 7000"])
        let cursor = try await database.integers("SELECT seq FROM read_cursors WHERE user_id = 'u1'")
        #expect(cursor == [before.events[2].seq], "the sender's own last message (c2) is read")

        // The message records keep their runs (a retry is a duplicate), and the clock goes on.
        let retry = try await Self.send(postgres, "c1", "hello", to: conversation, at: 10_000)
        guard case .duplicate(.finalized, _, _) = retry else { throw FixtureError("not a duplicate: \(retry)") }
        let fresh = try await Self.send(postgres, "c3", "new", to: conversation, at: 10_000)
        guard case .fresh(let event, _, _) = fresh else { throw FixtureError("not fresh: \(fresh)") }
        let copiedLast = try await database.integers("SELECT max(seq) FROM events WHERE stream_id = 'u1' AND id <> '\(event.id)'")[0]
        #expect(event.seq == copiedLast + 1)
        await writer.stop()
    }

    @Test func aDatabaseHoldingRelayDataOrOtherTablesIsRefused() async throws {
        let sqlite = try SQLiteRelay()
        _ = try await Self.fill(sqlite.journal)
        let database = try await TestDatabase(migrate: false)
        _ = try await sqlite.copy(into: database)
        let events = try await database.integers("SELECT count(*) FROM events")
        let again = await #expect(throws: PostgresStoreError.self) { try await sqlite.copy(into: database) }
        #expect(
            again?.message.contains("already holds relay data (") == true && again?.message.contains("devices: 1 row") == true,
            "\(String(describing: again))"
        )
        #expect(try await database.integers("SELECT count(*) FROM events") == events, "nothing was added")

        let foreign = try await TestDatabase(migrate: false)
        try await foreign.execute("CREATE TABLE invoices (id int)")
        let refused = await #expect(throws: PostgresStoreError.self) { try await sqlite.copy(into: foreign) }
        #expect(refused?.message.contains("not clawrelay's (invoices)") == true, "\(String(describing: refused))")
        #expect(try await foreign.strings("SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'") == ["invoices"])
    }
}
