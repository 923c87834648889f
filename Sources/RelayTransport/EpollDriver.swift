internal import CLibEv
internal import CLibWebSockets
import Foundation

/// Runs the service thread on an epoll loop (`[server] event_loop = "epoll"`): lws's libev glue
/// (Debian's `libwebsockets-evlib-ev`, which lws loads when the context is created) watches each
/// socket on a libev loop with the epoll backend, so an iteration costs what the ready sockets
/// cost, where lws's default loop runs `poll()` over every socket.
///
/// The loop is foreign to lws: the service thread creates it and runs it one iteration at a time,
/// so it can stop between iterations. The timers are the relay's own. lws 4.1's libev glue re-arms
/// its one timer with `ev_timer_set` on a watcher that is already running, which libev ignores: a
/// deadline earlier than the armed one (a 250 ms relay timer behind lws's 30 s housekeeping) waited
/// for the later one. So the relay's `TimerQueue` runs on a libev timer of its own here, and each
/// time that fires, at the latest every `lwsTimerTickMicros`, the driver wakes lws
/// (`lws_cancel_service`): the glue's idle handler, which follows every lws event, then runs lws's
/// due timers (its close and header timeouts, `LWS_TO_KILL_ASYNC`) whatever its own timer says.
///
/// (lws's external-poll callbacks, `LWS_CALLBACK_ADD_POLL_FD` and the like, would let the relay run
/// epoll itself, but Debian builds lws 4.1.6 without `LWS_WITH_EXTERNAL_POLL`. Its libuv glue, in
/// Debian's `_DEBUG` build, closes a socket a second time after a close started from a callback,
/// before the close frame is out, and lws's own 1002 and 1007 closes start there too.)
///
/// - Important: loop thread only, like the rest of `ServiceLoop`.
final class EpollDriver {
    /// The longest lws's own timers wait for the wake-up that runs them.
    static let lwsTimerTickMicros: UInt64 = 1_000_000

    /// The context the loop serves; set once it exists, woken when the timer fires.
    var context: OpaquePointer?
    private let loop: OpaquePointer
    private let timer: UnsafeMutablePointer<ev_timer>
    /// `lws_context_creation_info.foreign_loops`: lws reads the loop from it when it creates the context.
    let foreignLoops: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private let timerFired: () -> Void

    /// An epoll loop whose timer calls `timerFired`, or nil when libev cannot make one.
    init?(timerFired: @escaping () -> Void) {
        guard let loop = relay_ev_epoll_loop_new() else { return nil }
        self.loop = loop
        self.timerFired = timerFired
        timer = .allocate(capacity: 1)
        timer.initialize(to: ev_timer())
        foreignLoops = .allocate(capacity: 1)
        foreignLoops.initialize(to: UnsafeMutableRawPointer(loop))
        relay_ev_timer_init(timer, epollTimerFired, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        ev_timer_stop(loop, timer)
        ev_loop_destroy(loop)
        timer.deallocate()
        foreignLoops.deallocate()
    }

    /// Waits for the next events (sockets, lws's wake-up pipe, the timer) and handles them.
    func runOnce() {
        ev_run(loop, Int32(EVRUN_ONCE))
    }

    /// Fires the timer `micros` from now, replacing any earlier arming.
    func arm(afterMicros micros: UInt64) {
        relay_ev_timer_arm(loop, timer, Double(micros) / 1_000_000)
    }

    /// Microseconds until the timer should fire: at the relay's earliest deadline (0 when it is
    /// due), and no later than `tick` so lws's own timers run.
    static func delay(untilEarliest earliest: UInt64?, now: UInt64, tick: UInt64 = lwsTimerTickMicros) -> UInt64 {
        guard let earliest else { return tick }
        return earliest > now ? min(earliest - now, tick) : 0
    }

    fileprivate func fire() {
        timerFired()
        if let context { lws_cancel_service(context) }
    }
}

private func epollTimerFired(_ loop: OpaquePointer?, _ timer: UnsafeMutablePointer<ev_timer>?, _ events: Int32) {
    guard let timer, let owner = relay_ev_timer_data(timer) else { return }
    Unmanaged<EpollDriver>.fromOpaque(owner).takeUnretainedValue().fire()
}
