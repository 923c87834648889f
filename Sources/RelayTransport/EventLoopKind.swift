/// Which event loop runs the libwebsockets service thread (`[server] event_loop`).
public enum EventLoopKind: String, Sendable, CaseIterable {
    /// lws's default loop: one `poll()` over every socket on each iteration, so its cost grows with
    /// the connections, busy or idle.
    case poll
    /// lws's libev glue on an epoll loop the service thread owns (`EpollDriver`): an iteration costs
    /// what the ready sockets cost.
    case epoll
}
