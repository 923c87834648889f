/// The points a turn's message has passed (`MonotonicClock` ns; 0 = not stamped: a retry run
/// again, a relay command, a bridge that does not stamp its frames).
struct TurnStamps {
    /// Its frame arrived at the bridge.
    var received: UInt64 = 0
    /// Its store write completed on the loop.
    var committed: UInt64 = 0
    var started: UInt64 = 0
    var firstProgress: UInt64 = 0
    /// The final answer arrived and went to the store.
    var finalSubmitted: UInt64 = 0
}
