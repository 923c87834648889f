/// One stream's delivery on one node: hands the stream's durable events to the node's sockets in
/// seq order, each at most once, whichever node wrote them.
///
/// The node's own writes arrive with their events in hand (`local`); other nodes' writes arrive as
/// positions (`heard`), and what they moved is read from the log (`read` actions, answered with
/// `readDone`). A local write whose seqs are not next after what was delivered waits until the
/// gap before it was read, so every socket sees seq order. Positions are hints: a lost one is
/// healed by the next position or resync (`heard` with the stream's head), a repeated one costs
/// nothing. A seq with nothing to deliver (an answer's slot) is a gap, not a loss.
///
/// Pure: the driver (`ClusterDelivery`) performs the actions.
public struct StreamFollower<Payload> {
    public enum Action {
        /// Read the log after `after` through `through` and answer with `readDone`.
        case read(after: Int64, through: Int64)
        /// Hand these out, in this order.
        case deliver([Payload])
    }

    /// Every seq up to this one was handed out or known empty; nil until the first write or position.
    public private(set) var delivered: Int64?
    /// The newest seq known to be committed.
    public private(set) var known: Int64 = 0
    /// The read in flight.
    public private(set) var reading: ClosedRange<Int64>?
    /// Local writes waiting for the gap before them, oldest first.
    private var held: [(first: Int64, last: Int64, payloads: [Payload])] = []
    /// True from `begin()` until `start(at:)`: the stream's head is being read.
    public private(set) var isStarting = false

    public init() {}

    /// True when nothing waits: no read in flight, no local write held, no start under way.
    public var isIdle: Bool { reading == nil && held.isEmpty && !isStarting }

    /// The stream's first reader on this node arrived (its socket replayed the history up to
    /// now): what this follower did before does not matter, and it starts over from the stream's
    /// head, which the driver reads and passes to `start(at:)`. Meanwhile local writes wait and
    /// positions are only noted. False (nothing to do) while a read or a held write is pending.
    public mutating func begin() -> Bool {
        guard !isStarting, reading == nil, held.isEmpty else { return false }
        isStarting = true
        delivered = nil
        return true
    }

    /// The head read for `begin()`: every seq up to it is the reader's replay's; local writes that
    /// waited are handed out (those up to the head too: no replay had them), then what moved since
    /// is read. Nil when the head could not be read: the writes that waited are taken as contiguous.
    public mutating func start(at head: Int64?) -> [Action] {
        guard isStarting else { return [] }
        isStarting = false
        let floor = head ?? held.first.map { $0.first - 1 } ?? known
        delivered = floor
        var out = held.filter { $0.last <= floor }.flatMap(\.payloads)
        held.removeAll { $0.last <= floor }
        out += releaseHeld()
        let next = nextRead()
        return (out.isEmpty ? [] : [.deliver(out)]) + next
    }

    /// This node committed seqs `first...last` of the stream, with `payloads` to hand out (none for
    /// a write that delivers nothing itself, such as a change its owner already announced).
    public mutating func local(first: Int64, last: Int64, payloads: [Payload]) -> [Action] {
        known = max(known, last)
        if isStarting {
            held.append((first, last, payloads))
            held.sort { $0.first < $1.first }
            return []
        }
        guard let floor = delivered else {
            delivered = last
            return payloads.isEmpty ? [] : [.deliver(payloads)]
        }
        if last <= floor { return [] }
        if reading == nil, held.isEmpty, first - 1 <= floor {
            delivered = last
            return payloads.isEmpty ? [] : [.deliver(payloads)]
        }
        held.append((first, last, payloads))
        held.sort { $0.first < $1.first }
        return nextRead()
    }

    /// Another node moved the stream to `position.last` (or a resync read its head). `listened`:
    /// whether this node has sockets for the stream; without any, nothing is read and the stream
    /// only moves on.
    public mutating func heard(_ position: StreamPosition, listened: Bool) -> [Action] {
        known = max(known, position.last)
        if isStarting { return [] }
        guard let floor = delivered else {
            delivered = listened ? position.prev : position.last
            return listened ? nextRead() : []
        }
        guard position.last > floor else { return [] }
        guard listened || !isIdle else {
            delivered = position.last
            return []
        }
        return nextRead()
    }

    /// The read `through` ended: `entries` (seq and payload, any order) are what the log held after
    /// the read's start. `complete` is false when the read stopped at a page limit: only seqs up to
    /// the newest entry count as read.
    public mutating func readDone(_ entries: [(seq: Int64, payload: Payload)], complete: Bool) -> [Action] {
        guard let range = reading else { return [] }
        reading = nil
        let floor = delivered ?? range.lowerBound
        let fresh = entries.filter { $0.seq > floor && $0.seq <= range.upperBound }.sorted { $0.seq < $1.seq }
        // A page cut short counts up to its newest entry (an empty page cannot be short).
        let reached = complete || entries.isEmpty ? range.upperBound : min(range.upperBound, entries.map(\.seq).max() ?? floor)
        delivered = max(floor, reached)
        var out = fresh.map(\.payload)
        out += releaseHeld()
        let next = nextRead()
        return (out.isEmpty ? [] : [.deliver(out)]) + next
    }

    /// The read in flight failed: it is asked again by the next position, local write or resync.
    public mutating func readFailed() { reading = nil }

    /// Held local writes that now follow on from `delivered`, in order; those a read covered are
    /// dropped (the read handed their events out).
    private mutating func releaseHeld() -> [Payload] {
        var out: [Payload] = []
        while let first = held.first, let floor = delivered {
            if first.last <= floor {
                held.removeFirst()
            } else if first.first - 1 <= floor {
                held.removeFirst()
                delivered = first.last
                out += first.payloads
            } else {
                break
            }
        }
        return out
    }

    /// The read that closes the next gap: up to the first held write, or up to what is known.
    private mutating func nextRead() -> [Action] {
        guard reading == nil, let floor = delivered else { return [] }
        let target = held.first.map { $0.first - 1 } ?? known
        guard target > floor else { return [] }
        reading = (floor + 1)...target
        return [.read(after: floor, through: target)]
    }
}
