import Foundation

/// Why a TCP connection to a host cannot be made, in the words `curl` or `ssh` would use: lws
/// reports every failed connect as "Unable to connect", whether nothing listens, the name does
/// not resolve or nobody answers. One plain connect, made again, tells them apart.
///
/// - Important: blocking (name lookup, connect, up to `timeoutMillis` per address): call it on a
///   thread of its own, never on the service loop or the cooperative pool.
enum ConnectProbe {
    /// What went wrong ("connection refused", "no answer within 2 s", "no address for
    /// nosuch.example (Name or service not known)"), or nil when a connection could be made
    /// (the failure came later: TLS or the WebSocket handshake).
    static func failure(host: String, port: Int, timeoutMillis: Int) -> String? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let lookup = getaddrinfo(host, String(port), &hints, &found)
        guard lookup == 0, let first = found else { return "no address for \(host) (\(String(cString: gai_strerror(lookup))))" }
        defer { freeaddrinfo(first) }
        var failure = "no address for \(host)"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let address = next {
            guard let problem = attempt(address.pointee, timeoutMillis: timeoutMillis) else { return nil }
            failure = problem
            next = address.pointee.ai_next
        }
        return failure
    }

    /// One non-blocking connect to one address, waited for at most `timeoutMillis`.
    private static func attempt(_ address: addrinfo, timeoutMillis: Int) -> String? {
        let socket = Glibc.socket(address.ai_family, address.ai_socktype | Int32(SOCK_NONBLOCK.rawValue), address.ai_protocol)
        guard socket >= 0 else { return describe(errno) }
        defer { close(socket) }
        if connect(socket, address.ai_addr, address.ai_addrlen) == 0 { return nil }
        guard errno == EINPROGRESS else { return describe(errno) }
        var watched = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
        guard poll(&watched, 1, Int32(timeoutMillis)) > 0 else { return "no answer within \(max(1, timeoutMillis / 1000)) s" }
        var problem: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(socket, SOL_SOCKET, SO_ERROR, &problem, &length) == 0 else { return describe(errno) }
        return problem == 0 ? nil : describe(problem)
    }

    /// `strerror`, as the middle of a sentence ("connection refused").
    private static func describe(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}
