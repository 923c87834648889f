import Foundation
import Logging
import PostgresNIO
import RelayCore
import RelayStorePostgres
import Synchronization

/// A `PostgresJournal` on a fresh database, its completions run on the writer's task.
struct JournalFixture {
    let database: TestDatabase
    let writer: PostgresWriter
    let journal: PostgresJournal
    /// What the journal reported of writes nobody waits for.
    let errors = Recorder<String>()

    init(node: NodeIncarnation = NodeIncarnation(node: "n1")) async throws {
        database = try await TestDatabase()
        writer = database.writer(for: node)
        let errors = errors
        journal = PostgresJournal(writer: writer, logger: database.logger) { what, error in errors.append("\(what): \(error)") }
    }

    /// Stops the writer once everything submitted has run.
    func stop() async { await writer.stop() }
}

/// Waits for a journal call's completion: `try await awaiting { journal.conversation(id: "c", completion: $0) }`.
func awaiting<T>(_ call: (@escaping (Result<T, any Error>) -> Void) -> Void) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        call { result in continuation.resume(with: result.map { UncheckedBox(value: $0) }) }
    }
    .value
}

/// Waits for a call whose completion takes no result (`barrier`, `dequeue`).
func awaitingDone(_ call: (@escaping () -> Void) -> Void) async {
    await withCheckedContinuation { continuation in call { continuation.resume() } }
}

/// Carries a result out of a completion that runs on the writer's task.
///
/// `@unchecked Sendable` holds because the value is handed over once, from the completion to the
/// awaiting test, and not touched by the completion afterwards.
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
}

extension TestDatabase {
    /// Runs one statement on a connection of its own.
    func execute(_ sql: String) async throws {
        try await withConnection { connection in _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) }
    }

    /// Runs `sql` and returns its first column as text values.
    func strings(_ sql: String) async throws -> [String] { try await column(PostgresQuery(unsafeSQL: sql), as: String.self) }
}
