import RelayCore

/// Reading a link machine's actions in a test suite: conform the suite and call these.
public protocol LinkMachineSuite {}

extension LinkMachineSuite {
    /// The states reported, in order.
    public func reports<Own>(_ actions: [LinkAction<Own>]) -> [LinkState] {
        actions.compactMap { if case .report(let state, _) = $0 { state } else { nil } }
    }

    /// The last report's detail; empty when nothing was reported.
    public func detail<Own>(_ actions: [LinkAction<Own>]) -> String {
        actions.compactMap { if case .report(_, let detail) = $0 { detail } else { nil } }.last ?? ""
    }

    /// How long the retry waits; nil when none was armed.
    public func retryDelay<Own>(_ actions: [LinkAction<Own>]) -> Int? {
        actions.lazy.compactMap { if case .armRetry(let millis) = $0 { millis } else { nil } }.first
    }

    /// The frames sent, as JSON.
    public func sent<Own>(_ actions: [LinkAction<Own>]) -> [JSONValue] {
        actions.compactMap { if case .send(let text) = $0 { JSONValue.parse(text) } else { nil } }
    }
}
