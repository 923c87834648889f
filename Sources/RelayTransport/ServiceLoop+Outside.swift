extension ServiceLoop {
    /// A connection id for traffic this process exchanges outside libwebsockets (an upstream
    /// account's REST calls over libcurl), from the same sequence as the sockets'. Loop thread only.
    public func newOutsideConnectionID() -> UInt64 {
        precondition(isOnLoop)
        defer { nextConnectionID += 1 }
        return nextConnectionID
    }

    /// Hands an HTTP request or response made outside libwebsockets to the frame observer, so the
    /// audit records upstream REST calls as it records frames (and redacts them the same way).
    /// `opcode` is the method or the status; `body` may be cut, `size` is the whole. Loop thread only.
    public func observeOutsideHTTP(
        connectionID: UInt64,
        listener: String,
        direction: FrameDirection,
        opcode: String,
        body: [UInt8],
        size: Int,
        deviceID: String? = nil
    ) {
        precondition(isOnLoop)
        observe(connectionID, listener, direction, .http, opcode, body, size: size, device: deviceID)
    }
}
