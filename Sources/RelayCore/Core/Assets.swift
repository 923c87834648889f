/// The durable side of uploaded files' metadata (their bytes live under the data directory).
///
/// - Important: called on the loop; completions run later on the loop.
public protocol AssetJournal: AnyObject {
    func saveAsset(_ asset: AssetRecord, completion: @escaping (Result<Void, any Error>) -> Void)
    func asset(id: String, completion: @escaping (Result<AssetRecord?, any Error>) -> Void)
}

/// Uploaded files' metadata.
///
/// - Important: loop thread only.
public final class Assets {
    private let journal: AssetJournal

    init(journal: AssetJournal) { self.journal = journal }

    /// Stores an uploaded file's record; `completion` runs once it is durable.
    public func save(_ asset: AssetRecord, completion: @escaping (Result<Void, any Error>) -> Void) {
        journal.saveAsset(asset, completion: completion)
    }

    public func find(_ id: String, completion: @escaping (Result<AssetRecord?, any Error>) -> Void) { journal.asset(id: id, completion: completion) }
}
