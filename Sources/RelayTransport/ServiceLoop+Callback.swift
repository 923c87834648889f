internal import CLibWebSockets
import Foundation

/// The one lws protocol callback; routes each reason to the loop that owns the context.
func relayServiceCallback(
    _ wsi: OpaquePointer?,
    _ reason: lws_callback_reasons,
    _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?,
    _ length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let raw = lws_context_user(context) else { return 0 }
    let loop = Unmanaged<ServiceLoop>.fromOpaque(raw).takeUnretainedValue()
    return loop.handle(wsi: wsi, reason: reason, input: input, length: length)
}

extension ServiceLoop {
    func handle(wsi: OpaquePointer, reason: lws_callback_reasons, input: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            drainMailbox()
        case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
            return isStopping ? 1 : 0
        case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
            // A connection must finish its request headers within `headerTimeoutSeconds`, or it
            // is dropped (a slowloris).
            lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_KEEPALIVE_IDLE, Self.headerTimeoutSeconds)
            // Kept while it may still send request headers, to name it if lws drops them as too large.
            acceptedPeers[wsi] = peerAddress(wsi)
        case LWS_CALLBACK_RAW_ADOPT:
            rawAdopted(wsi)
        case LWS_CALLBACK_RAW_RX:
            rawReceived(wsi, input: input, length: length)
        case LWS_CALLBACK_RAW_WRITEABLE:
            return rawWritable(wsi)
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            guard let entry = listenerEntry(for: wsi) else { return 1 }
            guard entry.config.acceptsAnyWebSocketPath || entry.config.webSocketPaths.contains(header(wsi, WSI_TOKEN_GET_URI) ?? "") else { return 1 }
            if let refusal = entry.handler.refusal(ofWebSocket: requestHeaders(wsi, custom: entry.config.customHeaders)) {
                writeRefusal(refusal, to: wsi)
                return 1
            }
            return 0
        case LWS_CALLBACK_ESTABLISHED:
            acceptedPeers.removeValue(forKey: wsi)
            return webSocketEstablished(wsi)
        case LWS_CALLBACK_RECEIVE:
            return webSocketReceive(wsi, input: input, length: length)
        case LWS_CALLBACK_RECEIVE_PONG:
            webSockets[wsi]?.lastPongMicros = monotonicMicros()
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            // RFC 6455 §5.5.1/§7.4: a close body is empty or starts with a valid code; anything
            // else is answered with 1002 instead of being echoed.
            guard length != 1 else {
                lws_close_reason(wsi, LWS_CLOSE_STATUS_PROTOCOL_ERR, nil, 0)
                return -1
            }
            if let input, length >= 2, let connection = webSockets[wsi] {
                let bytes = input.assumingMemoryBound(to: UInt8.self)
                let code = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
                guard Self.isValidPeerCloseCode(code) else {
                    lws_close_reason(wsi, LWS_CLOSE_STATUS_PROTOCOL_ERR, nil, 0)
                    return -1
                }
                connection.peerCloseCode = code
            }
        case LWS_CALLBACK_SERVER_WRITEABLE, LWS_CALLBACK_CLIENT_WRITEABLE:
            return webSocketWritable(wsi)
        case LWS_CALLBACK_CLOSED, LWS_CALLBACK_CLIENT_CLOSED:
            resetIfUnread(wsi)
            webSocketClosed(wsi)
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            return clientEstablished(wsi)
        case LWS_CALLBACK_CLIENT_RECEIVE:
            return webSocketReceive(wsi, input: input, length: length)
        case LWS_CALLBACK_CLIENT_RECEIVE_PONG:
            webSockets[wsi]?.lastPongMicros = monotonicMicros()
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            let reason = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection failed"
            clientFailed(wsi, reason: reason)
        case LWS_CALLBACK_HTTP:
            return httpRequest(wsi, uri: input, length: length)
        case LWS_CALLBACK_HTTP_BODY:
            if let input, let exchange = exchanges[wsi] {
                exchange.appendBody(UnsafeRawBufferPointer(start: input, count: length))
            }
        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            exchanges[wsi]?.completeBody()
        case LWS_CALLBACK_HTTP_WRITEABLE:
            return httpWritable(wsi)
        case LWS_CALLBACK_HTTP_FILE_COMPLETION:
            return finishExchange(wsi)
        case LWS_CALLBACK_CLOSED_HTTP:
            exchanges.removeValue(forKey: wsi)?.connectionClosed()
        case LWS_CALLBACK_WSI_DESTROY:
            serverConnectionDestroyed(wsi)
            exchanges.removeValue(forKey: wsi)?.connectionClosed()
            if webSockets[wsi] != nil { webSocketClosed(wsi) } else { clientVanished(wsi) }
            connectionIDs.removeValue(forKey: wsi)
        default:
            break
        }
        return 0
    }

    static let headerTimeoutSeconds: Int32 = 10

    /// Close codes a peer may send (RFC 6455 §7.4): 1000–1003, 1007–1014, and 3000–4999.
    static func isValidPeerCloseCode(_ code: UInt16) -> Bool {
        (1000...1003).contains(code) || (1007...1014).contains(code) || (3000...4999).contains(code)
    }

    func listenerEntry(for wsi: OpaquePointer) -> ListenerEntry? {
        guard let vhost = lws_get_vhost(wsi), let name = lws_get_vhost_name(vhost) else { return nil }
        return listeners[String(cString: name)]
    }

    func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        let copied = lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token)
        guard copied >= 0 else { return nil }
        return String(cBuffer: buffer)
    }

    /// Writes a whole HTTP/1.1 response with `connection: close` straight to the socket (the
    /// connection closes right after; lws's own status page would be HTTP/1.0 HTML).
    private func writeRefusal(_ response: HTTPResponse, to wsi: OpaquePointer) {
        guard case .bytes(let body) = response.body else { return }
        let head =
            "\(HTTPStatus.line(response.status))\r\ncontent-type: \(response.contentType)\r\ncontent-length: \(body.count)\r\nconnection: close\r\n\r\n"
        var bytes = [UInt8](repeating: 0, count: Int(relay_lws_pre())) + Array(head.utf8) + body
        let count = bytes.count - Int(relay_lws_pre())
        bytes.withUnsafeMutableBufferPointer { buffer in
            _ = lws_write(wsi, buffer.baseAddress!.advanced(by: Int(relay_lws_pre())), count, LWS_WRITE_HTTP_FINAL)
        }
    }

    /// The query string: lws keeps each `name=value` argument as a fragment of its own (and
    /// `lws_hdr_copy` would glue them together), so they are read one by one and joined with `&`.
    func queryString(_ wsi: OpaquePointer) -> String {
        var arguments: [String] = []
        for index in 0..<64 {
            let length = Int(lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, Int32(index)))
            guard length > 0 else { break }
            var buffer = [CChar](repeating: 0, count: length + 1)
            guard lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, Int32(index)) >= 0 else { break }
            arguments.append(String(cBuffer: buffer))
        }
        return arguments.joined(separator: "&")
    }

    /// The headers a handler of this listener reads.
    func requestHeaders(_ wsi: OpaquePointer, custom names: [String]) -> RequestHeaders {
        var custom: [String: String] = [:]
        for name in names {
            let key = name + ":"
            let length = Int(lws_hdr_custom_length(wsi, key, Int32(key.utf8.count)))
            guard length >= 0, length < 4096 else { continue }
            var buffer = [CChar](repeating: 0, count: length + 1)
            guard lws_hdr_custom_copy(wsi, &buffer, Int32(buffer.count), key, Int32(key.utf8.count)) >= 0 else { continue }
            custom[name] = String(cBuffer: buffer)
        }
        return RequestHeaders(
            query: queryString(wsi),
            authorization: header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION),
            userAgent: header(wsi, WSI_TOKEN_HTTP_USER_AGENT),
            custom: custom
        )
    }

    func peerAddress(_ wsi: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        guard lws_get_peer_simple(wsi, &buffer, buffer.count) != nil else { return "" }
        return String(cBuffer: buffer)
    }

    /// Hands one frame or HTTP message to the observer (the audit), if there is one.
    func observe(
        _ connectionID: UInt64,
        _ listener: String,
        _ direction: FrameDirection,
        _ kind: FrameRecord.Kind,
        _ opcode: String,
        _ body: [UInt8],
        size: Int? = nil,
        device: String? = nil,
        user: String? = nil,
        millis: Int64? = nil
    ) {
        if logger.logLevel <= .trace {
            // Sizes and kinds only: bodies may hold secrets (the audit log redacts them).
            logger.trace(
                "frame",
                metadata: [
                    "listener": "\(listener)", "conn": "\(connectionID)", "direction": "\(direction)", "kind": "\(kind)", "opcode": "\(opcode)",
                    "bytes": "\(size ?? body.count)",
                ]
            )
        }
        guard let frameObserver else { return }
        let millis = millis ?? Int64(Date().timeIntervalSince1970 * 1000)
        frameObserver.observe(
            FrameRecord(
                timeMillis: millis,
                connectionID: connectionID,
                listener: listener,
                direction: direction,
                kind: kind,
                opcode: opcode,
                size: size ?? body.count,
                body: body,
                deviceID: device,
                userID: user
            )
        )
    }

    // MARK: WebSocket

    private func webSocketEstablished(_ wsi: OpaquePointer) -> Int32 {
        guard let entry = listenerEntry(for: wsi) else { return -1 }
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
        let id = newConnectionID(for: wsi)
        let connection = WebSocketConnection(
            id: id,
            wsi: wsi,
            listener: entry.config.name,
            path: header(wsi, WSI_TOKEN_GET_URI) ?? "/",
            peerAddress: peerAddress(wsi),
            io: self,
            maxMessageBytes: entry.config.maxMessageBytes
        )
        connection.maxBufferedBytes = entry.config.maxBufferedBytes
        connection.headers = requestHeaders(wsi, custom: entry.config.customHeaders)
        webSockets[wsi] = connection
        entry.handler.webSocketOpened(connection)
        // Observed after the handler, so a socket that authenticated at the upgrade (a token in
        // its headers) names its device from its first row.
        observe(
            id,
            connection.listener,
            .inbound,
            .webSocket,
            "open",
            Array(connection.path.utf8),
            device: connection.deviceID,
            user: connection.userID
        )
        return 0
    }

    private func webSocketReceive(_ wsi: OpaquePointer, input: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        guard let connection = webSockets[wsi] else { return -1 }
        if connection.isClosing { return 0 }
        if lws_is_first_fragment(wsi) != 0 {
            connection.fragments.removeAll(keepingCapacity: true)
            connection.fragmentsAreBinary = lws_frame_is_binary(wsi) != 0
        }
        // What the message holds so far plus what the current frame's header says is still coming.
        let declared = connection.fragments.count + length + Int(lws_remaining_packet_payload(wsi))
        if declared > connection.maxMessageBytes {
            observe(connection.id, connection.listener, .inbound, .webSocket, "oversized", [], size: declared)
            connection.fragments = []
            connection.close(code: 1009, reason: "message too big")
            return 0
        }
        if let input, length > 0 {
            connection.fragments.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
        }
        guard lws_is_final_fragment(wsi) != 0, lws_remaining_packet_payload(wsi) == 0 else { return 0 }
        let bytes = connection.fragments
        connection.fragments = []
        let message: WebSocketMessage = connection.fragmentsAreBinary ? .binary(bytes) : .text(String(decoding: bytes, as: UTF8.self))
        if let client = connection.clientHandler {
            client.client(connection, received: message)
        } else {
            listeners[connection.listener]?.handler.webSocket(connection, received: message)
        }
        // Observed after the handler, so a frame that names its device (a pairing request) is
        // attributed to it; replies are observed when written, later.
        observe(
            connection.id,
            connection.listener,
            .inbound,
            .webSocket,
            connection.fragmentsAreBinary ? "binary" : "text",
            bytes,
            device: connection.deviceID,
            user: connection.userID
        )
        return 0
    }

    /// lws is about to close a WebSocket's descriptor. If the kernel still holds bytes the peer
    /// never took, a plain close would queue the FIN behind them: the peer, reading nothing, would
    /// keep seeing an open connection, and the kernel would keep the bytes, until TCP gave up
    /// minutes later. The close resets the connection instead.
    private func resetIfUnread(_ wsi: OpaquePointer) {
        let unsent = relay_lws_unsent_bytes(wsi)
        guard unsent > 0 else { return }
        relay_lws_reset_on_close(wsi)
        let connection = webSockets[wsi]
        logger.info(
            "resetting a socket whose peer left data unread",
            metadata: ["listener": "\(connection?.listener ?? "-")", "conn": "\(connectionIDs[wsi] ?? 0)", "unsent": "\(unsent)"]
        )
    }

    func webSocketClosedByError(_ wsi: OpaquePointer, reason: String) {
        guard let connection = webSockets.removeValue(forKey: wsi) else { return }
        connection.isClosed = true
        connection.clientHandler?.clientClosed(connection, error: reason)
    }

    private func webSocketClosed(_ wsi: OpaquePointer) {
        guard let connection = webSockets.removeValue(forKey: wsi) else { return }
        connection.isClosed = true
        observe(
            connection.id,
            connection.listener,
            .inbound,
            .webSocket,
            "closed",
            Array("\(connection.peerCloseCode.map(String.init) ?? "-")".utf8),
            device: connection.deviceID,
            user: connection.userID
        )
        if connection.isClient {
            connection.clientHandler?.clientClosed(connection, error: nil)
        } else {
            listeners[connection.listener]?.handler.webSocketClosed(connection)
        }
        checkDrained()
    }
}
