/// What a device gets on reconnect.
public struct ReplayWindow: Sendable, Equatable {
    public var events: [ChatEvent]
    public var truncated: Bool
    /// The cursor was absent or unknown, so the window is the tail of the whole history.
    public var historyReset: Bool
    /// Per audience read, the highest seq in its history when the window was read.
    public var highWater: [String: Int64]

    public init(events: [ChatEvent], truncated: Bool, historyReset: Bool, highWater: [String: Int64]) {
        self.events = events
        self.truncated = truncated
        self.historyReset = historyReset
        self.highWater = highWater
    }
}
