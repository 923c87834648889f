import Testing

@testable import RelayTransport

@Suite struct HTTPStatusTests {
    @Test(arguments: [
        (200, "HTTP/1.1 200 OK"), (201, "HTTP/1.1 201 Created"), (204, "HTTP/1.1 204 No Content"), (409, "HTTP/1.1 409 Conflict"),
        (413, "HTTP/1.1 413 Content Too Large"), (426, "HTTP/1.1 426 Upgrade Required"), (429, "HTTP/1.1 429 Too Many Requests"),
        (503, "HTTP/1.1 503 Service Unavailable"),
    ])
    func everyStatusTheRelaySendsHasItsPhrase(code: Int, line: String) {
        #expect(HTTPStatus.line(code) == line)
    }

    @Test func aCodeWithoutAPhraseIsNamedByItsClass() {
        #expect(HTTPStatus.reason(299) == "Success" && HTTPStatus.reason(499) == "Client Error" && HTTPStatus.reason(599) == "Server Error")
    }

    @Test func theNotHTTPAnswerDeclaresItsOwnLength() {
        let (head, body) = (ServiceLoop.notHTTP.components(separatedBy: "\r\n\r\n")[0], ServiceLoop.notHTTPBody)
        #expect(head.hasPrefix("HTTP/1.1 400 Bad Request\r\n") && head.contains("content-length: \(body.utf8.count)"))
        #expect(ServiceLoop.notHTTP.hasSuffix("\r\n\r\n" + body))
    }
}
