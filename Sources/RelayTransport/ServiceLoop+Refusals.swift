internal import CLibWebSockets
import Foundation
import Logging

/// What the relay answers to clients that never get as far as a handler: a `CONNECT` tunnel
/// request (405), bytes that are not HTTP on a plain port (a TLS ClientHello, garbage: a short
/// plain-text 400, where lws would send an HTML 403), and request headers too large for lws
/// (dropped, and logged with the remote address lws leaves out).
extension ServiceLoop {
    static let methodNotAllowed =
        "HTTP/1.1 405 Method Not Allowed\r\nallow: GET, POST, PUT, PATCH, DELETE, OPTIONS, HEAD\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    static let notHTTPBody = "400 Bad Request: this port speaks plain HTTP/WebSocket\n"
    static let notHTTP =
        "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: \(notHTTPBody.utf8.count)\r\nconnection: close\r\n\r\n"
        + notHTTPBody

    /// lws handed the connection over raw (plain vhosts fall back to raw on a request line that is
    /// not HTTP; a `CONNECT` always goes raw): it gets one answer, written when writable.
    func rawAdopted(_ wsi: OpaquePointer) {
        acceptedPeers.removeValue(forKey: wsi)
        lws_callback_on_writable(wsi)
    }

    /// The bytes lws read before it gave up on HTTP: a `CONNECT` request line is a tunnel asked
    /// for, anything else is not HTTP.
    func rawReceived(_ wsi: OpaquePointer, input: UnsafeMutableRawPointer?, length: Int) {
        guard rawAnswers[wsi] == nil else { return }
        let first = input.map { Array(UnsafeRawBufferPointer(start: $0, count: min(length, 8))) } ?? []
        let isTunnel = first.starts(with: Array("CONNECT ".utf8))
        rawAnswers[wsi] = isTunnel ? Self.methodNotAllowed : Self.notHTTP
        if !isTunnel {
            logger.debug("answered bytes that are not HTTP with 400", metadata: ["remote": "\(peerAddress(wsi))", "bytes": "\(length)"])
        }
    }

    /// Writes the answer; the connection closes after it.
    func rawWritable(_ wsi: OpaquePointer) -> Int32 {
        let text = rawAnswers.removeValue(forKey: wsi) ?? Self.methodNotAllowed
        var answer = Array(repeating: UInt8(0), count: Int(relay_lws_pre())) + Array(text.utf8)
        answer.withUnsafeMutableBufferPointer { buffer in
            let start = buffer.baseAddress!.advanced(by: Int(relay_lws_pre()))
            _ = lws_write(wsi, start, text.utf8.count, LWS_WRITE_HTTP)  // LWS_WRITE_RAW is this macro
        }
        return -1
    }

    /// A server connection is going away; if lws dropped it because its headers overflowed, say
    /// who sent them.
    func serverConnectionDestroyed(_ wsi: OpaquePointer) {
        rawAnswers.removeValue(forKey: wsi)
        let peer = acceptedPeers.removeValue(forKey: wsi)
        guard LibraryLog.current?.takeHeaderOverflow() == true else { return }
        var metadata: Logger.Metadata = ["remote": "\(peer ?? "unknown")"]
        if let entry = listenerEntry(for: wsi) { metadata["listener"] = "\(entry.config.name)" }
        LibraryLog.current?.log(.warning, "request headers too large; connection dropped", metadata: metadata)
    }
}
