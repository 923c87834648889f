import Logging
import PostgresNIO
import RelayCore

/// The writer task's connection and how a batch runs on it; owned by that one task.
struct WriterSession {
    typealias Call<Request, Value> = @Sendable (PostgresConnection, [Request], NodeIncarnation, Logger) async throws -> [Value]
    typealias Resolve<Request, Value> =
        @Sendable (PostgresConnection, [Request], NodeIncarnation, Logger) async throws -> [Result<Value, PostgresStoreError>]

    let writer: PostgresWriter
    private var connection: PostgresConnection?
    private var connections = 0
    /// The backend PID of `connection`, as `OwnBackends` knows it.
    private var backend: Int32?

    init(writer: PostgresWriter) {
        self.writer = writer
    }

    /// The batch's reports, in its order.
    mutating func execute(_ batch: [PostgresWriter.Operation]) async -> [@Sendable () -> Void] {
        switch batch[0] {
        case .accept:
            return await run(batch, WriterCalls.accept, WriterCalls.resolveAccepts) {
                if case .accept(let request, let completion) = $0 { (request, completion) } else { nil }
            }
        case .claim:
            return await run(batch, WriterCalls.claim, WriterCalls.resolveClaims) {
                if case .claim(let conversation, let completion) = $0 { (conversation, completion) } else { nil }
            }
        case .end:
            return await run(batch, WriterCalls.end, WriterCalls.resolveEnds) {
                if case .end(let end, let completion) = $0 { (end, completion) } else { nil }
            }
        case .withdraw:
            return await run(batch, LedgerCalls.withdraw, LedgerCalls.again(LedgerCalls.withdraw)) {
                if case .withdraw(let runID, let completion) = $0 { (runID, completion) } else { nil }
            }
        case .declareDead:
            return await run(batch, LedgerCalls.declareDead, LedgerCalls.unknownDeclaration) {
                if case .declareDead(let request, let completion) = $0 { (request, completion) } else { nil }
            }
        case .turnWrite:
            return await run(batch, TurnWriteCalls.write, TurnWriteCalls.unknown) {
                if case .turnWrite(let write, let completion) = $0 { (write, completion) } else { nil }
            }
        case .work:
            var reports: [@Sendable () -> Void] = []
            for case .work(let work) in batch { reports.append(await run(work)) }
            return reports
        }
    }

    private mutating func run<Request: Sendable, Value: Sendable>(
        _ batch: [PostgresWriter.Operation],
        _ call: Call<Request, Value>,
        _ resolve: Resolve<Request, Value>,
        _ unpack: (PostgresWriter.Operation) -> (Request, PostgresWriter.Completion<Value>)?
    ) async -> [@Sendable () -> Void] {
        let items = batch.compactMap(unpack)
        let results = await perform(items.map(\.0), call: call, resolve: resolve)
        return zip(items, results).map { item, result in { item.1(result) } }
    }

    /// One call for the batch. A connection lost on the way makes the outcome unknown: it is read
    /// back by key on a new connection. A statement error rolled the batch back: it is rerun one
    /// operation per call, so a failure fails only its own caller.
    private mutating func perform<Request: Sendable, Value: Sendable>(
        _ requests: [Request],
        call: Call<Request, Value>,
        resolve: Resolve<Request, Value>
    ) async -> [Result<Value, PostgresStoreError>] {
        let logger = writer.logger
        do {
            let connection = try await connected()
            return try await call(connection, requests, writer.node, logger).map { .success($0) }
        } catch let error as PostgresStoreError {
            return requests.map { _ in .failure(error) }
        } catch  where PostgresStoreError.isConnectionFailure(error) {
            let summary = PostgresStoreError.summary(of: error)
            logger.warning("postgres writer: connection lost during a batch; reading its outcome back", metadata: ["error": "\(summary)"])
            await close()
            do {
                return try await resolve(try await connected(), requests, writer.node, logger)
            } catch {
                await close()
                let lost = PostgresStoreError(
                    code: .connectionLost,
                    message: "the connection to PostgreSQL was lost during the write and its outcome could not be read back (\(summary)); retry"
                )
                return requests.map { _ in .failure(lost) }
            }
        } catch {
            guard requests.count > 1 else { return [.failure(PostgresStoreError(code: .rejected, message: PostgresStoreError.summary(of: error)))] }
            var results: [Result<Value, PostgresStoreError>] = []
            for request in requests { results += await perform([request], call: call, resolve: resolve) }
            return results
        }
    }

    /// One journal operation on the connection. A connection lost on the way closes it (the next
    /// operation opens a new one) and fails the operation with `.connectionLost`: each operation
    /// is safe to repeat, and its caller decides whether to. An error the operation raised itself
    /// (`TurnFenced`, a store error) reaches its caller as it is.
    private mutating func run(_ work: JournalWork) async -> @Sendable () -> Void {
        do {
            return try await work.run(try await connected(), writer.logger)
        } catch let error as PSQLError where PostgresStoreError.isConnectionFailure(error) {
            await close()
            let lost = PostgresStoreError(
                code: .connectionLost,
                message: "the connection to PostgreSQL was lost during \(work.what) (\(PostgresStoreError.summary(of: error))); retry"
            )
            return { work.fail(lost) }
        } catch let error as PSQLError {
            let rejected = PostgresStoreError(code: .rejected, message: "\(work.what): \(PostgresStoreError.summary(of: error))")
            return { work.fail(rejected) }
        } catch {
            let passed = UncheckedError(error)
            return { work.fail(passed.error) }
        }
    }

    private mutating func connected() async throws -> PostgresConnection {
        if let connection, !connection.isClosed { return connection }
        connections += 1
        do {
            let configuration = try writer.settings.configuration(applicationName: "clawrelay:\(writer.node.node):writer")
            let connection = try await PostgresConnection.connect(configuration: configuration, id: connections, logger: writer.logger)
            let pid = try await connection.first("SELECT pg_backend_pid()", as: Int32.self, logger: writer.logger)
            if let pid { writer.ownBackends.replace(backend, with: pid) }
            backend = pid
            self.connection = connection
            return connection
        } catch let error as PostgresStoreError {
            throw error
        } catch {
            throw PostgresStoreError(
                code: .connectionLost,
                message: "cannot connect to PostgreSQL (\(writer.settings)): \(PostgresStoreError.summary(of: error))"
            )
        }
    }

    mutating func close() async {
        try? await connection?.close()
        connection = nil
    }
}
