import Foundation

/// Where a listener binds, checked before lws is asked to: lws takes a host it cannot bind (a
/// name, an address this machine does not have, a port it may not use) as an interface to wait for
/// and listens nowhere, so the relay resolves the host and tries the bind itself first.
enum ListenAddress {
    /// The numeric address to hand lws, or why nothing can listen there.
    static func resolve(host: String, port: Int) -> Result<String, TransportError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            return .failure(TransportError(message: "cannot resolve \(host): \(String(cString: gai_strerror(status)))"))
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            candidate = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard fd >= 0 else {
                lastError = String(cString: strerror(errno))
                continue
            }
            var on: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            let bound = bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0
            if !bound { lastError = String(cString: strerror(errno)) }
            close(fd)
            if bound, let numeric = numericHost(info.pointee.ai_addr, info.pointee.ai_addrlen) { return .success(numeric) }
        }
        return .failure(TransportError(message: lastError))
    }

    private static func numericHost(_ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, length, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 else { return nil }
        return String(cBuffer: buffer)
    }
}
