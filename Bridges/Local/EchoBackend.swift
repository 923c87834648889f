import Dispatch
import RelayCore

/// A built-in backend that answers every turn with `echo: <text>`, streamed word by word, and a
/// line per attachment (`[attached: photo.png, image/png]`) so a test sees what reached it.
///
/// - Important: With a delay, events are delivered on a private serial queue, and after `cancel()`
///   returns at most the event already being delivered can still arrive. Without one, the whole
///   answer is handed to `events` before `start` returns, on the caller's thread (the loop): the
///   runner queues each event for its next turn of the loop anyway, and a hop through another
///   thread and back would only add two wake-ups per turn.
public final class EchoBackend: Backend {
    public let name: String
    private let delay: DispatchTimeInterval?
    private let queue: DispatchQueue

    /// Creates an echo backend that waits `delayMillis` before each progress step and the final answer.
    public init(name: String, delayMillis: Int) {
        self.name = name
        self.delay = delayMillis > 0 ? .milliseconds(delayMillis) : nil
        self.queue = DispatchQueue(label: "clawrelay.echo.\(name)")
    }

    public func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnHandle {
        let steps = Self.script(for: turn.text + Self.attachmentLines(turn.attachments))
        let cancelled = SharedFlag()
        if let delay {
            queue.async { events(.typing(true)) }
            scheduleStep(1, of: steps, after: delay, cancelled: cancelled, events: events)
        } else {
            for event in steps.joined() { events(event) }
        }
        return TurnHandle { cancelled.set() }
    }

    private func scheduleStep(
        _ index: Int,
        of steps: [[TurnEvent]],
        after delay: DispatchTimeInterval,
        cancelled: SharedFlag,
        events: @escaping @Sendable (TurnEvent) -> Void
    ) {
        queue.asyncAfter(deadline: .now() + delay) { [self] in
            for event in steps[index] {
                guard !cancelled.isSet else { return }
                events(event)
            }
            if index + 1 < steps.count {
                scheduleStep(index + 1, of: steps, after: delay, cancelled: cancelled, events: events)
            }
        }
    }

    /// The events of one turn, grouped by the pause that precedes each group.
    static func script(for text: String) -> [[TurnEvent]] {
        let reply = "echo: " + text
        var steps: [[TurnEvent]] = [[.typing(true)]]
        steps += progressTexts(for: text).map { [.progress($0)] }
        steps.append([.typing(false), .final(reply)])
        return steps
    }

    /// One line per attachment, after the text.
    static func attachmentLines(_ attachments: [TurnAttachment]) -> String {
        attachments.map { "\n[attached: \($0.fileName.map { String($0.prefix(128)) } ?? "unnamed"), \($0.mimeType.prefix(64))]" }.joined()
    }

    /// "echo:" then the reply growing at word ends, at most `maxWordSteps` word steps, the last one complete.
    static func progressTexts(for text: String, maxWordSteps: Int = 8) -> [String] {
        var ends: [String.Index] = []
        var previousIsSpace = true
        for index in text.indices {
            let isSpace = text[index].isWhitespace
            if isSpace && !previousIsSpace { ends.append(index) }
            previousIsSpace = isSpace
        }
        if ends.last != text.endIndex { ends.append(text.endIndex) }
        if ends.count > maxWordSteps {
            let all = ends
            ends = (1...maxWordSteps).map { step in all[(step * all.count + maxWordSteps - 1) / maxWordSteps - 1] }
        }
        return ["echo:"] + ends.map { "echo: " + text[..<$0] }
    }
}
