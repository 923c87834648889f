import Foundation
import Logging
import RelayCore
import Synchronization

/// Makes an upstream account's credential files travel with its lease (migration 13): the files
/// a bridge keeps in the node's accounts folder (`<account>.clawline.json`, the OpenClaw
/// operator's `<account>.key` and `.token`, `<account>.discoclaw.json`) are stored in PostgreSQL
/// by the account's holder, and written into a node's own folder when it takes the account, before
/// its link opens (the bridges never know).
///
/// After each heartbeat (`sync`), for each account this node holds:
/// - newly held: the stored files replace the local ones (0600, atomically; a local file the
///   cluster's copy does not have is removed); when none is stored yet (the first holder ever),
///   the local files are stored as the cluster's;
/// - held before: files whose size or modification time moved are read, and the changed ones
///   stored (a write another node's takeover fenced off is refused and logged).
///
/// A held account's link that reports itself connected (`linkConnected`: it may have just
/// paired) has its files checked at once, not at the next heartbeat. A file over `maxFileBytes`
/// is not shared (logged). Contents never reach a log.
///
/// - Important: any thread; the syncs run one at a time, in the order asked.
public final class AccountFileSync: Sendable {
    /// The files of account `a` are `a.` + one of these in the accounts folder.
    public static let suffixes = ["clawline.json", "discoclaw.json", "key", "token"]
    /// Credential files are small; a larger one is refused.
    public static let maxFileBytes = 1 << 20

    /// What one account's sync did.
    public enum Outcome: Equatable, Sendable {
        /// Took the stored files (their names), replacing the local ones.
        case downloaded([String])
        /// Stored these local files (changed, or the first copy).
        case uploaded([String])
        /// Nothing changed since the last sync.
        case unchanged
        /// This node does not hold the account (a takeover fenced the write off).
        case refused
    }

    /// A local file as last seen: its size and modification time, and its bytes then (none for a
    /// file too large to share).
    private struct Seen: Equatable {
        var size: Int
        var modified: Date
        var bytes: Data
        var tooLarge = false
    }

    private struct State {
        /// Accounts held at the last sync, with their files as then.
        var held: [String: [String: Seen]] = [:]
    }

    private let directory: String
    private let node: PostgresNode
    private let logger: Logger
    private let state = Mutex(State())
    /// The last sync asked for: each waits for the one before it.
    private let last = Mutex<Task<Void, Never>?>(nil)

    /// `directory`: this node's accounts folder (`<data_dir>/accounts`).
    public init(directory: String, node: PostgresNode, logger: Logger) {
        self.directory = directory
        self.node = node
        self.logger = logger
    }

    /// Syncs the files of the accounts `leases` name this node as the holder of. Failures are
    /// logged; the account is tried again at the next heartbeat.
    public func sync(_ leases: [AccountLease]) async {
        for lease in leases where lease.holder == node.identity {
            await logged(lease.account) { try await self.sync(lease.account) }
        }
    }

    /// The account's link reported itself connected: a held account's changed files (a pairing's
    /// token) are stored now. Returns the task that does it.
    @discardableResult
    public func linkConnected(_ account: String) -> Task<Void, Never> {
        Task {
            await logged(account) {
                guard let seen = self.state.withLock({ $0.held[account] }) else { return }
                _ = try await self.upload(account, since: seen)
            }
        }
    }

    /// Runs `work` after the syncs asked before it, logging its failure.
    private func logged(_ account: String, _ work: @escaping @Sendable () async throws -> Void) async {
        let task = last.withLock { last -> Task<Void, Never> in
            let previous = last
            let next = Task { [logger] in
                await previous?.value
                do {
                    try await work()
                } catch {
                    logger.warning(
                        "cluster: cannot share the account's files",
                        metadata: ["account": "\(account)", "error": "\(PostgresStoreError.summary(of: error))"]
                    )
                }
            }
            last = next
            return next
        }
        await task.value
    }

    /// Whether the account's files were taken (or first stored) since this node holds it: until
    /// then its link must not open (it would present this node's own files upstream).
    public func hasTaken(_ account: String) -> Bool { state.withLock { $0.held[account] != nil } }

    /// Syncs one account this node holds (one step of `sync(_ leases:)`, not ordered with the others).
    public func sync(_ account: String) async throws -> Outcome {
        guard let seen = state.withLock({ $0.held[account] }) else { return try await take(account) }
        return try await upload(account, since: seen)
    }

    /// Newly held: the cluster's copy replaces the local files, or the local files become it.
    private func take(_ account: String) async throws -> Outcome {
        // Only the account's own file names are written (a stored name is never taken as a path).
        let expected = Set(Self.suffixes.map { "\(account).\($0)" })
        let fetched = try await node.accountFiles(account)
        for name in fetched.keys.sorted() where !expected.contains(name) {
            logger.error("cluster: a stored account file has a name this relay does not write; ignored", metadata: meta(account, [name]))
        }
        let stored = fetched.filter { expected.contains($0.key) }
        guard !stored.isEmpty else {
            let outcome = try await upload(account, since: [:])
            if case .uploaded(let names) = outcome {
                logger.info("cluster: no copy of the account's files was stored; this node's are the cluster's now", metadata: meta(account, names))
            }
            return outcome
        }
        let local = read(account)
        for (name, bytes) in stored.sorted(by: { $0.key < $1.key }) where local[name]?.bytes != bytes {
            try await AssetFiles.write(bytes, to: path(name))
            if local[name] != nil {
                logger.notice("cluster: the account's file here differed from the cluster's copy, which replaces it", metadata: meta(account, [name]))
            }
        }
        for name in local.keys.sorted() where stored[name] == nil {
            try FileManager.default.removeItem(atPath: path(name))
            logger.notice("cluster: the cluster's copy of the account has no such file; removed here", metadata: meta(account, [name]))
        }
        let now = read(account)
        state.withLock { $0.held[account] = now }
        return .downloaded(stored.keys.sorted())
    }

    /// Stores the account's files that changed since `seen` and forgets those gone.
    private func upload(_ account: String, since seen: [String: Seen]) async throws -> Outcome {
        let local = read(account, known: seen)
        let shared = local.filter { !$0.value.tooLarge }
        let changed = shared.filter { seen[$0.key]?.bytes != $0.value.bytes }
        guard !changed.isEmpty || Set(shared.keys) != Set(seen.filter { !$0.value.tooLarge }.keys) else {
            state.withLock { $0.held[account] = local }
            return .unchanged
        }
        let stored = try await node.storeAccountFiles(
            account,
            present: shared.keys.sorted(),
            changed: changed.mapValues(\.bytes),
            now: Int64(Date().timeIntervalSince1970 * 1000)
        )
        guard stored else {
            logger.warning("cluster: this node no longer holds the account; its files were not stored", metadata: meta(account, []))
            return .refused
        }
        state.withLock { $0.held[account] = local }
        logger.debug("cluster: stored the account's files", metadata: meta(account, changed.keys.sorted()))
        return .uploaded(changed.keys.sorted())
    }

    /// The account's files in the folder (by file name); a file whose size and modification time
    /// match `known` is not read again. A file over `maxFileBytes` is not read (logged once per change).
    private func read(_ account: String, known: [String: Seen] = [:]) -> [String: Seen] {
        var files: [String: Seen] = [:]
        for suffix in Self.suffixes {
            let name = "\(account).\(suffix)"
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path(name)) else { continue }
            let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
            let modified = attributes[.modificationDate] as? Date ?? .distantPast
            if let previous = known[name], previous.size == size, previous.modified == modified {
                files[name] = previous
                continue
            }
            guard size <= Self.maxFileBytes else {
                logger.error(
                    "cluster: the account's file is larger than 1 MiB; not shared with the other nodes",
                    metadata: meta(account, [name]).merging(["bytes": "\(size)"]) { $1 }
                )
                files[name] = Seen(size: size, modified: modified, bytes: Data(), tooLarge: true)
                continue
            }
            guard let bytes = FileManager.default.contents(atPath: path(name)) else { continue }
            files[name] = Seen(size: size, modified: modified, bytes: bytes)
        }
        return files
    }

    private func path(_ name: String) -> String { (directory as NSString).appendingPathComponent(name) }

    private func meta(_ account: String, _ names: [String]) -> Logger.Metadata {
        ["account": "\(account)", "files": "\(names.joined(separator: ","))"]
    }
}
