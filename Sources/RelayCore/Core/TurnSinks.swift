/// Where an upstream account's running turns report, by turn id: an event reaches its turn, and a
/// turn that ended (`final` or `failed`) hears nothing more.
///
/// - Important: loop thread only (owned by the account's turns).
public struct TurnSinks {
    private var sinks: [String: @Sendable (TurnEvent) -> Void] = [:]

    public init() {}

    /// A turn starts reporting to `sink`.
    public mutating func add(_ id: String, _ sink: @escaping @Sendable (TurnEvent) -> Void) { sinks[id] = sink }

    /// The turn was cancelled: it hears nothing more.
    public mutating func remove(_ id: String) { sinks[id] = nil }

    /// Hands the turn its event; its sink goes with its last one.
    public mutating func emit(_ event: TurnEvent, to id: String) {
        guard let sink = sinks[id] else { return }
        if event.endsTurn { sinks[id] = nil }
        sink(event)
    }

    /// Fails every turn still reporting (the link went away), and forgets them.
    public mutating func failAll(_ reason: String) {
        let all = sinks
        sinks = [:]
        for sink in all.values { sink(.failed(reason)) }
    }

    public var isEmpty: Bool { sinks.isEmpty }

    public func contains(_ id: String) -> Bool { sinks[id] != nil }
}

extension TurnEvent {
    /// The turn is over after this event.
    public var endsTurn: Bool {
        switch self {
        case .final, .failed: true
        case .typing, .progress, .toolStarted, .toolEnded, .backendSession, .approval, .approvalWithdrawn, .report, .status: false
        }
    }
}
