import Foundation

/// An HTTP response the loop writes back.
public struct HTTPResponse: Sendable {
    public enum Body: Sendable {
        case bytes([UInt8])
        /// Streamed from disk by libwebsockets.
        case file(path: String)
    }

    public var status: Int
    public var contentType: String
    public var headers: [(String, String)]
    public var body: Body

    public init(status: Int, contentType: String = "application/json", headers: [(String, String)] = [], body: Body) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }

    public static func json(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, body: .bytes(Array(text.utf8)))
    }

    public static func text(_ status: Int, _ text: String, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, contentType: contentType, body: .bytes(Array(text.utf8)))
    }
}

/// Where a request body goes while it arrives.
public enum BodySink: Sendable {
    case memory
    case file(path: String)
}

public enum ReceivedBody: Sendable {
    case bytes([UInt8])
    case file(path: String, size: Int)
}

public enum BodyError: Error, Sendable {
    case tooLarge
    case writeFailed(String)
    /// The connection closed (or stalled past the idle timeout) before the body ended.
    case closed
}

/// One HTTP request on a listener, answered once with `respond`.
///
/// - Important: owned by the service thread; `respond` may come later (after store work), but on the loop.
public final class HTTPExchange {
    public let connectionID: UInt64
    public let listener: String
    public let method: String
    public let path: String
    public let query: String
    public let authorization: String?
    public let contentType: String?
    public let contentLength: Int?
    public let isWebSocketUpgradePath: Bool
    /// The query and the headers handlers read (user agent, the listener's custom headers).
    public internal(set) var headers = RequestHeaders()
    /// The device the request authenticated as, and its user: the listener sets them as soon as it
    /// knows (before it answers), so the audit names them on the request's rows.
    public var deviceID: String?
    public var userID: String?

    /// The libwebsockets handle; nil for an exchange in memory.
    let wsi: OpaquePointer?
    unowned let io: any ConnectionIO
    var response: HTTPResponse?
    var headersWritten = false
    var bodyOffset = 0
    var isClosed = false
    var bodyLimit = 0
    var bodyCount = 0
    var bodyBuffer: [UInt8] = []
    var bodyFile: FileHandle?
    var bodyPath: String?
    var bodyCompletion: ((Result<ReceivedBody, BodyError>) -> Void)?
    var bodyFailed = false
    var done: (() -> Void)?
    /// The request said `Connection: close`.
    var clientAskedToClose = false
    /// The request's audit row, held until the handler had its chance to authenticate it (see
    /// `ServiceLoop.observeHTTPRequest`).
    var unobservedRequest: (line: [UInt8], size: Int, millis: Int64)?

    init(
        connectionID: UInt64,
        wsi: OpaquePointer?,
        listener: String,
        method: String,
        path: String,
        query: String,
        authorization: String?,
        contentType: String?,
        contentLength: Int?,
        isWebSocketUpgradePath: Bool,
        io: any ConnectionIO
    ) {
        self.connectionID = connectionID
        self.wsi = wsi
        self.listener = listener
        self.method = method
        self.path = path
        self.query = query
        self.authorization = authorization
        self.contentType = contentType
        self.contentLength = contentLength
        self.isWebSocketUpgradePath = isWebSocketUpgradePath
        self.io = io
    }

    /// True once the body has been asked for and not yet fully read.
    var isReadingBody: Bool { bodyCompletion != nil }

    /// Reads the request body into `sink`; more than `limit` bytes fails with `.tooLarge` at once. A
    /// body whose connection closes (lws drops one that stalls for its 5 s timeout) fails with
    /// `.closed` and leaves nothing behind (the file sink is removed).
    public func receiveBody(limit: Int, into sink: BodySink, completion: @escaping (Result<ReceivedBody, BodyError>) -> Void) {
        if let declared = contentLength, declared > limit {
            completion(.failure(.tooLarge))
            return
        }
        bodyLimit = limit
        bodyCompletion = completion
        if case .file(let path) = sink {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
                let handle = FileHandle(forWritingAtPath: path)
            else {
                bodyCompletion = nil
                completion(.failure(.writeFailed("cannot create \(path)")))
                return
            }
            bodyFile = handle
            bodyPath = path
        }
    }

    /// The connection went away: a body still arriving is dropped.
    func connectionClosed() {
        isClosed = true
        finished()
        if let completion = bodyCompletion { finishBody(with: .failure(.closed), completion: completion) }
    }

    /// Answers a request the loop refuses before any handler sees it, and closes the connection
    /// after the answer (its body, if any, is never read).
    func refuse(status: Int, code: String, message: String) {
        bodyFailed = true
        respond(.json(status, #"{"error":"\#(code)","message":"\#(message)"}"#))
    }

    func appendBody(_ chunk: UnsafeRawBufferPointer) {
        guard let completion = bodyCompletion, !bodyFailed else { return }
        bodyCount += chunk.count
        if bodyCount > bodyLimit {
            finishBody(with: .failure(.tooLarge), completion: completion)
            return
        }
        if let file = bodyFile {
            do { try file.write(contentsOf: Data(chunk)) } catch {
                finishBody(with: .failure(.writeFailed("\(error)")), completion: completion)
            }
        } else {
            bodyBuffer.append(contentsOf: chunk)
        }
    }

    func completeBody() {
        guard let completion = bodyCompletion, !bodyFailed else { return }
        if let file = bodyFile, let path = bodyPath {
            do {
                try file.synchronize()
                try file.close()
                bodyFile = nil
                finishBody(with: .success(.file(path: path, size: bodyCount)), completion: completion)
            } catch {
                finishBody(with: .failure(.writeFailed("\(error)")), completion: completion)
            }
        } else {
            finishBody(with: .success(.bytes(bodyBuffer)), completion: completion)
        }
    }

    private func finishBody(with result: Result<ReceivedBody, BodyError>, completion: (Result<ReceivedBody, BodyError>) -> Void) {
        bodyCompletion = nil
        if case .failure = result {
            bodyFailed = true
            try? bodyFile?.close()
            bodyFile = nil
            if let path = bodyPath { try? FileManager.default.removeItem(atPath: path) }
        }
        bodyBuffer = []
        completion(result)
    }

    /// Sends the response; later calls are ignored. `done` runs once it is written, or once the
    /// connection closed without it.
    public func respond(_ response: HTTPResponse, done: (() -> Void)? = nil) {
        guard self.response == nil, !isClosed else {
            done?()
            return
        }
        self.response = response
        self.done = done
        io.respond(self, with: response)
    }

    /// Runs `done` once.
    func finished() {
        let pending = done
        done = nil
        pending?()
    }

    /// The body was not read to its end, so the socket cannot carry another request.
    var mustCloseAfterResponse: Bool { clientAskedToClose || bodyFailed || isReadingBody || (contentLength ?? 0) > bodyCount }
}
