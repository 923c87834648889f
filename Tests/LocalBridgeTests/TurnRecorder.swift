import RelayCore
import Testing

/// Starts a turn and exposes its events as an `AsyncStream` that ends after `.final` or `.failed`.
struct TurnRecorder {
    let events: AsyncStream<TurnEvent>
    let cancellation: TurnHandle

    init(_ backend: any Backend, text: String, workingDirectory: String? = nil, backendSession: String? = nil) {
        let (stream, continuation) = AsyncStream.makeStream(of: TurnEvent.self)
        let turn = TurnRequest(
            userID: "user-1",
            deviceID: "device-1",
            conversationID: "conv-1",
            text: text,
            workingDirectory: workingDirectory,
            backendSession: backendSession
        )
        cancellation = backend.start(turn) { event in
            continuation.yield(event)
            if event.endsTurn { continuation.finish() }
        }
        events = stream
    }

    /// Every event of the turn, up to and including its end.
    static func run(_ backend: any Backend, text: String, workingDirectory: String? = nil, backendSession: String? = nil) async -> [TurnEvent] {
        let recorder = TurnRecorder(backend, text: text, workingDirectory: workingDirectory, backendSession: backendSession)
        var all: [TurnEvent] = []
        for await event in recorder.events { all.append(event) }
        return all
    }
}

/// The events `stream` yields within `duration` (all of them if it ends sooner).
func events(of stream: AsyncStream<TurnEvent>, within duration: Duration) async -> [TurnEvent] {
    await withTaskGroup(of: [TurnEvent]?.self) { group in
        group.addTask {
            var seen: [TurnEvent] = []
            for await event in stream { seen.append(event) }
            return seen
        }
        group.addTask {
            try? await Task.sleep(for: duration)
            return nil
        }
        var seen: [TurnEvent] = []
        while let result = await group.next() {
            if let result { seen = result }
            group.cancelAll()
        }
        return seen
    }
}

extension TurnEvent {
    var progressText: String? {
        if case .progress(let text) = self { return text }
        return nil
    }
    var isEnd: Bool { endsTurn }
}

/// Checks the shape every turn shares: typing(true), progress…, typing(false), then one end event.
func expectTurnShape(_ events: [TurnEvent], sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
    #expect(events.first == .typing(true), sourceLocation: sourceLocation)
    #expect(events.count >= 3, sourceLocation: sourceLocation)
    guard events.count >= 3 else { return [] }
    #expect(events[events.count - 2] == .typing(false), sourceLocation: sourceLocation)
    #expect(events.last?.isEnd == true, sourceLocation: sourceLocation)
    let middle = events.dropFirst().dropLast(2)
    let progress = middle.compactMap(\.progressText)
    #expect(progress.count == middle.count, "only progress between typing events", sourceLocation: sourceLocation)
    for (earlier, later) in zip(progress, progress.dropFirst()) {
        #expect(later.hasPrefix(earlier), "progress grows: \(earlier) → \(later)", sourceLocation: sourceLocation)
    }
    return progress
}
