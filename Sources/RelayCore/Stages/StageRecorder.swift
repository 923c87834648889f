/// Per-stage latency of relayed messages (see `MessageStage`), for `/metrics` and the bench.
///
/// The core and the bridges stamp a message with `MonotonicClock` as it passes each point and
/// hand each finished stretch to `record`, which only increments a bucket of a histogram that
/// exists from the start: no allocation, no lock, no work deferred to the hot path.
///
/// - Important: loop thread only.
public final class StageRecorder {
    private var histograms: [LatencyHistogram]
    /// The turn's final answer the core is publishing right now, if it is.
    private var publishing: FinalDelivery?

    public init() {
        histograms = [LatencyHistogram](repeating: LatencyHistogram(), count: MessageStage.allCases.count)
    }

    /// Counts `end - start` for `stage`; a point that was never stamped (0) or a negative
    /// stretch counts nothing.
    @inline(__always)
    public func record(_ stage: MessageStage, from start: UInt64, to end: UInt64) {
        guard start != 0, end >= start else { return }
        histograms[stage.rawValue].record(end - start)
    }

    public func histogram(_ stage: MessageStage) -> LatencyHistogram { histograms[stage.rawValue] }

    /// A store write of the message (`final` = its answer's), from submission to its completion
    /// now, split at the writer's own stamps when the journal has them.
    func recordStore(submitted: UInt64, completed: UInt64, batch: JournalBatchTiming?, final: Bool) {
        record(final ? .finalToCommitted : .submittedToCommitted, from: submitted, to: completed)
        guard let batch else { return }
        record(final ? .finalStoreQueue : .storeQueue, from: submitted, to: batch.takenAt)
        record(final ? .finalStoreTransaction : .storeTransaction, from: batch.takenAt, to: batch.committedAt)
        record(final ? .finalStoreReturn : .storeReturn, from: batch.committedAt, to: completed)
    }

    /// Runs `publish` (the core handing a committed final answer to the bus) so that bridges
    /// writing it can take a `FinalDelivery` with `finalWrite()`.
    func publishingFinal(received: UInt64, committed: UInt64, _ publish: () -> Void) {
        let delivery = FinalDelivery(recorder: self, received: received, committed: committed)
        publishing = delivery
        publish()
        publishing = nil
        delivery.close()
    }

    /// For a bridge queueing a turn's final answer on a socket: the delivery to report the write
    /// to (`written()`), or nil when the event being delivered is not a final the core is
    /// publishing now (a replay, a queue drain, a user echo).
    public func finalWrite() -> FinalDelivery? {
        publishing?.expectWrite()
        return publishing
    }
}

/// One final answer on its way to the sockets that take it live: when the last of them has it
/// written, `final_committed_to_written` and `received_to_final_written` are counted once. A
/// socket that closes before writing never reports, and then nothing is counted.
///
/// - Important: loop thread only.
public final class FinalDelivery {
    private weak var recorder: StageRecorder?
    private let received: UInt64
    private let committed: UInt64
    private var pending = 0
    private var isPublishing = true
    private var lastWrittenAt: UInt64 = 0

    init(recorder: StageRecorder, received: UInt64, committed: UInt64) {
        self.recorder = recorder
        self.received = received
        self.committed = committed
    }

    func expectWrite() { pending += 1 }

    /// The socket wrote the final (call from its write completion).
    public func written() {
        pending -= 1
        lastWrittenAt = MonotonicClock.nanos()
        countIfDone()
    }

    func close() {
        isPublishing = false
        countIfDone()
    }

    private func countIfDone() {
        guard !isPublishing, pending == 0, lastWrittenAt != 0, let recorder else { return }
        recorder.record(.finalCommittedToWritten, from: committed, to: lastWrittenAt)
        recorder.record(.receivedToFinalWritten, from: received, to: lastWrittenAt)
        lastWrittenAt = 0
    }
}
