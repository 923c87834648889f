internal import CLibWebSockets
import Foundation

extension ServiceLoop {
    private static let methodTokens: [(lws_token_indexes, String)] = [
        (WSI_TOKEN_GET_URI, "GET"), (WSI_TOKEN_POST_URI, "POST"), (WSI_TOKEN_OPTIONS_URI, "OPTIONS"),
        (WSI_TOKEN_PUT_URI, "PUT"), (WSI_TOKEN_DELETE_URI, "DELETE"), (WSI_TOKEN_HEAD_URI, "HEAD"),
        (WSI_TOKEN_PATCH_URI, "PATCH"),
    ]

    func httpRequest(_ wsi: OpaquePointer, uri: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        guard let entry = listenerEntry(for: wsi) else { return -1 }
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)  // the headers are in (see headerTimeoutSeconds)
        var method = "GET"
        var path = "/"
        for (token, name) in Self.methodTokens where lws_hdr_total_length(wsi, token) > 0 {
            method = name
            path = header(wsi, token) ?? "/"
            break
        }
        let lengthText = header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH)?.trimmingCharacters(in: .whitespaces)
        let lengthHeader = lengthText.flatMap { Int($0) }
        let exchange = HTTPExchange(
            connectionID: newConnectionID(for: wsi),
            wsi: wsi,
            listener: entry.config.name,
            method: method,
            path: path,
            query: queryString(wsi),
            authorization: header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION),
            contentType: header(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE),
            contentLength: lengthHeader,
            isWebSocketUpgradePath: entry.config.webSocketPaths.contains(path),
            io: self
        )
        exchange.headers = requestHeaders(wsi, custom: entry.config.customHeaders)
        // `Connection: close`: the socket ends with this answer instead of idling until the
        // keep-alive timeout (lws would keep it).
        exchange.clientAskedToClose = header(wsi, WSI_TOKEN_CONNECTION)?.lowercased().contains("close") ?? false
        exchanges[wsi] = exchange
        if frameObserver != nil {
            let line = "\(method) \(path)" + (exchange.authorization.map { "\nauthorization: \($0)" } ?? "")
            exchange.unobservedRequest = (Array(line.utf8), max(0, lengthHeader ?? 0), Int64(Date().timeIntervalSince1970 * 1000))
        }
        defer { observeHTTPRequest(exchange) }
        // Bodies are read by their declared length only: a chunked body (which would never end
        // for a handler) gets 411, a length that is not a non-negative integer 400.
        if header(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) != nil {
            exchange.refuse(status: 411, code: "length_required", message: "send the body with a Content-Length; chunked bodies are not accepted")
        } else if lengthText != nil, (lengthHeader ?? -1) < 0 {
            exchange.refuse(status: 400, code: "bad_request", message: "Content-Length must be a non-negative integer")
        } else {
            entry.handler.handleHTTP(exchange)
        }
        return 0
    }

    /// The request's row, once: after its handler returned (a listener that authenticates a request
    /// at once has named its device by then) or just before its response, whichever comes first.
    func observeHTTPRequest(_ exchange: HTTPExchange) {
        guard let (line, size, millis) = exchange.unobservedRequest else { return }
        exchange.unobservedRequest = nil
        observe(
            exchange.connectionID,
            exchange.listener,
            .inbound,
            .http,
            exchange.method,
            line,
            size: size,
            device: exchange.deviceID,
            user: exchange.userID,
            millis: millis
        )
    }

    func observeHTTPResponse(_ exchange: HTTPExchange, _ response: HTTPResponse) {
        guard frameObserver != nil else { return }
        observeHTTPRequest(exchange)
        let body: [UInt8]
        let size: Int
        switch response.body {
        case .bytes(let bytes):
            body = Array(bytes.prefix(4096))
            size = bytes.count
        case .file(let path):
            body = Array("<file \((path as NSString).lastPathComponent)>".utf8)
            size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        }
        observe(
            exchange.connectionID,
            exchange.listener,
            .outbound,
            .http,
            "\(response.status)",
            body,
            size: size,
            device: exchange.deviceID,
            user: exchange.userID
        )
    }

    func httpWritable(_ wsi: OpaquePointer) -> Int32 {
        guard let exchange = exchanges[wsi], let response = exchange.response else { return 0 }
        let pre = relay_lws_pre()
        if !exchange.headersWritten {
            exchange.headersWritten = true
            if case .file(let path) = response.body {
                // A HEAD answer is the file's headers alone, its length included.
                if exchange.method == "HEAD" {
                    let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
                    return writeHeaders(wsi, exchange, response, contentLength: size) ? finishExchange(wsi) : -1
                }
                var extra = response.headers.map { "\($0.0): \($0.1)\r\n" }.joined()
                if exchange.mustCloseAfterResponse { extra += "connection: close\r\n" }
                let result = lws_serve_http_file(wsi, path, response.contentType, extra.isEmpty ? nil : extra, Int32(extra.utf8.count))
                if result < 0 { return -1 }
                return result > 0 ? finishExchange(wsi) : 0
            }
            guard case .bytes(let body) = response.body, writeHeaders(wsi, exchange, response, contentLength: body.count) else { return -1 }
            // A HEAD answer is the GET answer's headers alone (its length included).
            if body.isEmpty || exchange.method == "HEAD" { return finishExchange(wsi) }
            lws_callback_on_writable(wsi)
            return 0
        }
        guard case .bytes(let body) = response.body else { return 0 }
        let chunk = min(body.count - exchange.bodyOffset, 64 * 1024)
        let isLast = exchange.bodyOffset + chunk >= body.count
        ensureScratch(pre + chunk)
        let base = scratch.baseAddress!.advanced(by: pre)
        body.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!.advanced(by: exchange.bodyOffset), byteCount: chunk) }
        if lws_write(wsi, base.assumingMemoryBound(to: UInt8.self), chunk, isLast ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) < chunk {
            return -1
        }
        exchange.bodyOffset += chunk
        if isLast { return finishExchange(wsi) }
        lws_callback_on_writable(wsi)
        return 0
    }

    /// Writes the status line and headers: the relay's own status line (lws's lacks most reason
    /// phrases), then the common headers; the content length also tells lws where the response ends.
    private func writeHeaders(_ wsi: OpaquePointer, _ exchange: HTTPExchange, _ response: HTTPResponse, contentLength: Int) -> Bool {
        let pre = relay_lws_pre()
        ensureScratch(pre + 4096 + response.headers.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 8 })
        let start = scratch.baseAddress!.advanced(by: pre).assumingMemoryBound(to: UInt8.self)
        var cursor: UnsafeMutablePointer<UInt8>? = start
        let end = scratch.baseAddress!.advanced(by: scratch.count - 1).assumingMemoryBound(to: UInt8.self)
        let statusLine = Array(HTTPStatus.line(response.status).utf8)
        let contentType = Array(response.contentType.utf8)
        if lws_add_http_header_by_name(wsi, nil, statusLine, Int32(statusLine.count), &cursor, end) != 0
            || lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE, contentType, Int32(contentType.count), &cursor, end) != 0
            || lws_add_http_header_content_length(wsi, lws_filepos_t(contentLength), &cursor, end) != 0
        {
            return false
        }
        var headers = response.headers
        if exchange.mustCloseAfterResponse { headers.append(("connection", "close")) }
        for (name, value) in headers {
            let nameBytes = Array((name.lowercased() + ":").utf8) + [0]
            let valueBytes = Array(value.utf8)
            if lws_add_http_header_by_name(wsi, nameBytes, valueBytes, Int32(valueBytes.count), &cursor, end) != 0 { return false }
        }
        return lws_finalize_write_http_header(wsi, start, &cursor, end) == 0
    }

    func finishExchange(_ wsi: OpaquePointer) -> Int32 {
        guard let exchange = exchanges.removeValue(forKey: wsi) else { return relay_http_done(wsi) != 0 ? -1 : 0 }
        exchange.isClosed = true
        exchange.finished()
        if exchange.mustCloseAfterResponse { return -1 }
        return relay_http_done(wsi) != 0 ? -1 : 0
    }
}
