internal import CLibWebSockets
import Foundation

/// Writing what bridges queue on a WebSocket.
///
/// A server's frames are not masked, so the loop frames the data frames queued on a server socket
/// itself and hands the socket one buffer per writable callback: one `send()` for an ack, an echo
/// and a typing frame, or for a whole replay window, instead of one per frame. A client's frames
/// must be masked, so client sockets write one frame at a time through `lws_write`, as do control
/// frames (ping, close) on both.
extension ServiceLoop {
    /// The most bytes gathered into one write (a single larger frame is written alone).
    static let gatherBytes = 64 * 1024

    /// Writes queued frames while the kernel takes them whole (`lws_send_pipe_choked` is false),
    /// up to a bound per callback so one busy socket cannot starve the others.
    func webSocketWritable(_ wsi: OpaquePointer) -> Int32 {
        guard let connection = webSockets[wsi] else { return 0 }
        let millis = frameObserver == nil ? 0 : Int64(Date().timeIntervalSince1970 * 1000)
        var budget = 64
        while budget > 0, let next = connection.peekOutbound() {
            budget -= 1
            if next.data != nil, !connection.isClient {
                if writeGathered(on: connection, wsi: wsi, millis: millis) < 0 { return -1 }
            } else {
                _ = connection.popOutbound()
                if write(next, on: connection, wsi: wsi, millis: millis) < 0 { return -1 }
            }
            // The check is a poll() of the socket: only worth it when more is waiting.
            if connection.hasOutbound, lws_send_pipe_choked(wsi) != 0 { break }
        }
        if connection.hasOutbound { lws_callback_on_writable(wsi) }
        return 0
    }

    /// Frames the data frames at the head of a server socket's queue into one buffer (up to
    /// `gatherBytes`, stopping at a control frame) and writes it. lws keeps what the kernel does
    /// not take and writes it before the next writable callback.
    private func writeGathered(on connection: WebSocketConnection, wsi: OpaquePointer, millis: Int64) -> Int32 {
        let pre = relay_lws_pre()
        var length = 0
        var written: [() -> Void] = []
        while let (payload, isText, onWritten) = connection.peekOutbound()?.data {
            let frameBytes = WebSocketFraming.headerBytes(payload.count) + payload.count
            if length > 0, length + frameBytes > Self.gatherBytes { break }
            _ = connection.popOutbound()
            ensureScratch(pre + length + frameBytes, keeping: pre + length)
            let start = scratch.baseAddress!.advanced(by: pre + length).assumingMemoryBound(to: UInt8.self)
            length += WebSocketFraming.writeHeader(into: start, opcode: isText ? 0x1 : 0x2, length: payload.count)
            payload.withUnsafeBytes { scratch.baseAddress!.advanced(by: pre + length).copyMemory(from: $0.baseAddress!, byteCount: payload.count) }
            length += payload.count
            observe(
                connection.id,
                connection.listener,
                .outbound,
                .webSocket,
                isText ? "text" : "binary",
                payload,
                device: connection.deviceID,
                user: connection.userID,
                millis: millis
            )
            if let onWritten { written.append(onWritten) }
        }
        guard length > 0 else { return 0 }
        // LWS_WRITE_HTTP is lws's "bytes as they are" on a WebSocket: no frame header of its own.
        let sent = lws_write(wsi, scratch.baseAddress!.advanced(by: pre).assumingMemoryBound(to: UInt8.self), length, LWS_WRITE_HTTP)
        if sent < length { return -1 }
        for callback in written { callback() }
        return 0
    }

    /// One frame through `lws_write`; -1 means close the socket (an error, or a close frame was sent).
    private func write(_ frame: WebSocketConnection.Outbound, on connection: WebSocketConnection, wsi: OpaquePointer, millis: Int64) -> Int32 {
        let pre = relay_lws_pre()
        switch frame {
        case .text, .binary:
            guard let (bytes, isText, onWritten) = frame.data else { return 0 }
            ensureScratch(pre + bytes.count)
            let base = scratch.baseAddress!
            bytes.withUnsafeBytes { base.advanced(by: pre).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            let written = lws_write(
                wsi,
                base.advanced(by: pre).assumingMemoryBound(to: UInt8.self),
                bytes.count,
                isText ? LWS_WRITE_TEXT : LWS_WRITE_BINARY
            )
            observe(
                connection.id,
                connection.listener,
                .outbound,
                .webSocket,
                isText ? "text" : "binary",
                bytes,
                device: connection.deviceID,
                user: connection.userID,
                millis: millis
            )
            if written < bytes.count { return -1 }
            onWritten?()
        case .ping:
            // libwebsockets hides pongs with an empty payload from the callback, so the ping carries one.
            ensureScratch(pre + 16)
            let payload = scratch.baseAddress!.advanced(by: pre).assumingMemoryBound(to: UInt8.self)
            for (index, byte) in "ping".utf8.enumerated() { payload[index] = byte }
            if lws_write(wsi, payload, 4, LWS_WRITE_PING) < 0 { return -1 }
        case .close(let code, let reason):
            var bytes = Array(reason.utf8)
            observe(
                connection.id,
                connection.listener,
                .outbound,
                .webSocket,
                "close",
                Array("\(code) \(reason)".utf8),
                device: connection.deviceID,
                user: connection.userID,
                millis: millis
            )
            lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code)), &bytes, bytes.count)
            return -1
        }
        return 0
    }

    /// Grows the scratch buffer to `size` bytes, keeping its first `keeping` bytes.
    func ensureScratch(_ size: Int, keeping: Int = 0) {
        guard scratch.count < size else { return }
        let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: max(size, scratch.count * 2), alignment: 16)
        if keeping > 0 { grown.baseAddress!.copyMemory(from: scratch.baseAddress!, byteCount: keeping) }
        scratch.deallocate()
        scratch = grown
    }
}

/// RFC 6455 §5.2 frame headers for unmasked (server) frames, FIN set.
enum WebSocketFraming {
    /// Header bytes for a payload of `length` bytes.
    static func headerBytes(_ length: Int) -> Int {
        length < 126 ? 2 : length <= 0xFFFF ? 4 : 10
    }

    /// Writes the header at `start` and returns its length.
    static func writeHeader(into start: UnsafeMutablePointer<UInt8>, opcode: UInt8, length: Int) -> Int {
        start[0] = 0x80 | opcode
        if length < 126 {
            start[1] = UInt8(length)
            return 2
        }
        if length <= 0xFFFF {
            start[1] = 126
            start[2] = UInt8(length >> 8)
            start[3] = UInt8(length & 0xFF)
            return 4
        }
        start[1] = 127
        for index in 0..<8 { start[2 + index] = UInt8((UInt64(length) >> (8 * UInt64(7 - index))) & 0xFF) }
        return 10
    }
}
