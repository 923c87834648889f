import CCurl
import Foundation

/// One request on the client's thread: its easy handle, and the headers and body libcurl hands back.
///
/// - Important: that thread only. libcurl's callbacks get an unretained pointer to it; the
///   thread's table of transfers keeps it alive until the handle has left the multi handle.
final class HTTPTransfer {
    /// Response header bytes kept; past it, further headers are dropped (libcurl caps each line).
    static let maxHeaderBytes = 64 * 1024

    let easy: UnsafeMutableRawPointer
    let completion: @Sendable (Result<HTTPResponse, HTTPFailure>) -> Void
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var headers: [String: String] = [:]
    private var headerBytes = 0
    private var body: [UInt8] = []
    private var maxBodyBytes = HTTPResponse.maxBodyBytes
    private var isTruncated = false

    init(easy: UnsafeMutableRawPointer, completion: @escaping @Sendable (Result<HTTPResponse, HTTPFailure>) -> Void) {
        self.easy = easy
        self.completion = completion
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    /// Sets every option for `request`; returns why not when libcurl refuses one or a header
    /// cannot be sent as given.
    func configure(_ request: HTTPRequest, caFile: String?, userAgent: String) -> HTTPFailure? {
        if let problem = Self.problem(in: request) { return .invalidRequest(problem) }
        let timeout = max(1, request.timeoutMillis)
        maxBodyBytes = request.maxResponseBytes
        let verify = request.allowSelfSigned ? 0 : 1
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        var codes: [CURLcode] = [
            relay_curl_set_str(easy, CURLOPT_URL, request.url),
            // Only web URLs: `file://`, `gopher://` and the like fail as "unsupported protocol".
            relay_curl_set_str(easy, CURLOPT_PROTOCOLS_STR, "http,https"),
            relay_curl_set_long(easy, CURLOPT_FOLLOWLOCATION, 0),
            relay_curl_set_long(easy, CURLOPT_NOSIGNAL, 1),
            relay_curl_set_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)),
            // Wait for a connection that may multiplex rather than open a second one. Only on
            // https: plain http is HTTP/1.1 here, and libcurl learns that a connection will not
            // multiplex only from its first response, so one slow answer would hold up the rest.
            relay_curl_set_long(easy, CURLOPT_PIPEWAIT, request.url.lowercased().hasPrefix("https://") ? 1 : 0),
            relay_curl_set_long(easy, CURLOPT_TIMEOUT_MS, timeout),
            relay_curl_set_long(easy, CURLOPT_CONNECTTIMEOUT_MS, min(timeout, 5_000)),
            relay_curl_set_long(easy, CURLOPT_SSL_VERIFYPEER, verify),
            relay_curl_set_long(easy, CURLOPT_SSL_VERIFYHOST, 2 * verify),
            relay_curl_set_long(easy, CURLOPT_TCP_KEEPALIVE, 1),
            relay_curl_set_str(easy, CURLOPT_USERAGENT, userAgent),
            relay_curl_set_ptr(easy, CURLOPT_ERRORBUFFER, errorBuffer),
            relay_curl_set_write_callback(
                easy,
                { data, size, count, user in
                    let length = size * count
                    guard let data, let user else { return length }
                    Unmanaged<HTTPTransfer>.fromOpaque(user).takeUnretainedValue().receiveBody(UnsafeRawBufferPointer(start: data, count: length))
                    return length
                },
                opaque
            ),
            relay_curl_set_header_callback(
                easy,
                { data, size, count, user in
                    let length = size * count
                    guard let data, let user else { return length }
                    Unmanaged<HTTPTransfer>.fromOpaque(user).takeUnretainedValue().receiveHeader(UnsafeRawBufferPointer(start: data, count: length))
                    return length
                },
                opaque
            ),
        ]
        if let caFile { codes.append(relay_curl_set_str(easy, CURLOPT_CAINFO, caFile)) }
        codes += setMethodAndBody(request)
        for (name, value) in request.headers {
            // "Name:" would make libcurl drop the header; "Name;" sends it empty.
            let line = value.isEmpty ? "\(name);" : "\(name): \(value)"
            guard let list = curl_slist_append(headerList, line) else { return .transport("out of memory building headers") }
            headerList = list
        }
        // No `Expect: 100-continue` round trip before a large HTTP/1.1 body, and no form
        // content type the caller did not ask for ("Name:" removes libcurl's own header).
        for name in ["Expect", "Content-Type"] where !request.headers.contains(where: { $0.name.lowercased() == name.lowercased() }) {
            guard let list = curl_slist_append(headerList, "\(name):") else { return .transport("out of memory building headers") }
            headerList = list
        }
        codes.append(relay_curl_set_slist(easy, CURLOPT_HTTPHEADER, headerList))
        if let refused = codes.first(where: { $0 != CURLE_OK }) {
            return .transport("libcurl refused an option: \(String(cString: curl_easy_strerror(refused)))")
        }
        return nil
    }

    private func setMethodAndBody(_ request: HTTPRequest) -> [CURLcode] {
        if request.method == "POST" || !request.body.isEmpty {
            // The size first: COPYPOSTFIELDS would otherwise stop at the first zero byte.
            let sized = relay_curl_set_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count))
            let copied = request.body.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress else { return relay_curl_set_str(easy, CURLOPT_COPYPOSTFIELDS, "") }
                return relay_curl_set_ptr(easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: base))
            }
            let custom = request.method == "POST" ? CURLE_OK : relay_curl_set_str(easy, CURLOPT_CUSTOMREQUEST, request.method)
            return [sized, copied, custom]
        }
        switch request.method {
        case "GET": return [relay_curl_set_long(easy, CURLOPT_HTTPGET, 1)]
        case "HEAD": return [relay_curl_set_long(easy, CURLOPT_NOBODY, 1)]
        default: return [relay_curl_set_str(easy, CURLOPT_CUSTOMREQUEST, request.method)]
        }
    }

    /// What makes `request` unsendable: control characters would split the request line or a
    /// header in two (header injection).
    static func problem(in request: HTTPRequest) -> String? {
        func isToken(_ text: String) -> Bool {
            !text.isEmpty && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && !"()<>@,;:\\\"/[]?={}".utf8.contains($0) }
        }
        if !isToken(request.method) { return "method \"\(request.method)\" is not an HTTP token" }
        if request.url.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return "the URL contains a control character" }
        for (name, value) in request.headers {
            if !isToken(name) { return "header name \"\(name)\" is not an HTTP token" }
            if value.utf8.contains(where: { $0 == 0 || $0 == 0x0A || $0 == 0x0D }) { return "header \(name) contains CR, LF or NUL" }
        }
        return nil
    }

    private func receiveBody(_ bytes: UnsafeRawBufferPointer) {
        let room = maxBodyBytes - body.count
        if room > 0 { body.append(contentsOf: bytes.prefix(room)) }
        if bytes.count > room { isTruncated = true }
    }

    private func receiveHeader(_ bytes: UnsafeRawBufferPointer) {
        let line = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        // A status line starts a response (a 100 Continue or an HTTP/2 upgrade may come first).
        if line.hasPrefix("HTTP/") {
            headers.removeAll()
            headerBytes = 0
            return
        }
        guard let colon = line.firstIndex(of: ":"), headerBytes + line.utf8.count <= Self.maxHeaderBytes else { return }
        headerBytes += line.utf8.count
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        headers[line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()] = value
    }

    /// The outcome once libcurl reports the transfer done with `code`.
    func outcome(_ code: CURLcode) -> Result<HTTPResponse, HTTPFailure> {
        guard code == CURLE_OK else { return .failure(.transport(errorText(code))) }
        var status = 0
        var version = 0
        _ = relay_curl_get_long(easy, CURLINFO_RESPONSE_CODE, &status)
        _ = relay_curl_get_long(easy, CURLINFO_HTTP_VERSION, &version)
        let major = version == Int(CURL_HTTP_VERSION_2_0) ? 2 : version == Int(CURL_HTTP_VERSION_3) ? 3 : 1
        return .success(HTTPResponse(status: status, headers: headers, body: body, httpVersion: major, isTruncated: isTruncated))
    }

    /// libcurl's detailed message ("Failed to connect to … port …: Connection refused") when it
    /// wrote one, else the code's generic text.
    private func errorText(_ code: CURLcode) -> String {
        let detail = String(cString: errorBuffer)
        return detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
    }
}
