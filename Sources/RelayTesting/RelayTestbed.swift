import Logging
import RelayCore
import RelayTransport

/// The whole core in memory, for a bridge's tests: a hub over a `MemoryJournal` on a
/// `ManualLoop` with its test clock, and backends the test scripts. A bridge built on `hub`,
/// `loop` and `clock` is driven through `harness(_:config:)` as a client would drive it.
///
/// - Important: one test's thread.
public final class RelayTestbed {
    public let loop: ManualLoop
    public let journal: MemoryJournal
    public let hub: RelayHub
    public let logger: Logger

    /// A hub whose router knows `backends` (the first is the default); `ScriptedBackend.echo()` when none is given.
    public init(backends: [any Backend] = [ScriptedBackend.echo()], settings: RelayHub.Settings = RelayHub.Settings()) {
        loop = ManualLoop()
        logger = Logger(label: "testbed")
        journal = MemoryJournal(loop: loop, clock: loop.clock)
        hub = RelayHub(
            journal: journal,
            router: Router(backends: backends, defaultBackend: nil),
            loop: loop,
            clock: loop.clock,
            logger: logger,
            settings: settings
        )
        hub.start()
    }

    public var clock: TestClock { loop.clock }

    /// A client's side of `handler`, the bridge's listener.
    public func harness(_ handler: ListenerHandler, config: ListenerConfig) -> ListenerHarness {
        ListenerHarness(handler: handler, config: config, loop: loop, logger: logger)
    }

    /// Runs what is due now (completions of the memory journal, backend events).
    public func settle() { loop.runUntilIdle() }

    /// Moves the test clock; due timers fire.
    public func advance(millis: Int64) { loop.advance(millis: millis) }
}
