import Foundation
import RelayCore
import RelayTransport

extension ClawlineDownstream {
    public func handleHTTP(_ exchange: HTTPExchange) {
        switch (exchange.method, exchange.path) {
        case ("GET", "/version"):
            exchange.respond(.json(200, FrameEncoder.encode(ServerFrame.Version())))
        case (_, "/ws"):
            exchange.respond(
                HTTPResponse(
                    status: 426,
                    headers: [("upgrade", "websocket")],
                    body: .bytes(Array(ServerFrame.httpError(.invalidMessage, "WebSocket upgrade required").utf8))
                )
            )
        case ("POST", "/upload"):
            upload(exchange)
        case ("GET", let path) where path.hasPrefix("/download/"):
            download(exchange, assetID: String(path.dropFirst("/download/".count)))
        default:
            respondError(exchange, .notFound, "no such endpoint")
        }
    }

    func respondError(_ exchange: HTTPExchange, _ code: ClawlineErrorCode, _ message: String) {
        exchange.respond(HTTPResponse(status: code.httpStatus, body: .bytes(Array(ServerFrame.httpError(code, message).utf8))))
    }

    /// The verified claims of a `Bearer` token, or nil.
    private func bearerClaims(_ exchange: HTTPExchange) -> (claims: DeviceClaims, tokenHash: String)? {
        guard let header = exchange.authorization, header.lowercased().hasPrefix("bearer ") else { return nil }
        let token = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty, case .success(let claims) = signer.verify(token, nowSeconds: clock.nowMillis() / 1000) else { return nil }
        return (claims, Digest.sha256Hex(token.utf8))
    }

    /// The device behind a verified bearer token, or why it may not use HTTP.
    private func authorizedDevice(
        _ claims: DeviceClaims,
        tokenHash: String,
        _ body: @escaping (Result<DeviceRecord, ClawlineErrorCode>) -> Void
    ) {
        hub.devices.find(claims.deviceId) { result in
            switch result {
            case .success(let device): body(Self.authorize(device, claims: claims, tokenHash: tokenHash))
            case .failure: body(.failure(.serverError))
            }
        }
    }

    private func upload(_ exchange: HTTPExchange) {
        guard let (claims, tokenHash) = bearerClaims(exchange) else {
            return respondError(exchange, .authFailed, "missing or invalid bearer token")
        }
        guard let boundary = exchange.contentType.flatMap(MultipartForm.boundary(fromContentType:)) else {
            return respondError(exchange, .invalidMessage, "expected multipart/form-data")
        }
        let temporary = (assetsDirectory as NSString).appendingPathComponent(".upload-\(Identifiers.newUUID())")
        let limit = settings.maxUploadBytes
        exchange.receiveBody(limit: limit + 64 * 1024, into: .file(path: temporary)) { [self] result in
            switch result {
            case .failure(.tooLarge):
                respondError(exchange, .payloadTooLarge, "uploads are limited to \(limit) bytes")
            case .failure(.closed):
                logger.debug("upload abandoned by its client; nothing kept")
            case .failure(.writeFailed(let reason)):
                logger.error("upload not written", metadata: ["error": "\(reason)"])
                respondError(exchange, .uploadFailedRetryable, "the upload could not be written; retry")
            case .success(let body):
                guard case .file(let path, _) = body else { return respondError(exchange, .serverError, "unexpected body") }
                storeUpload(exchange, file: path, boundary: boundary, claims: claims, tokenHash: tokenHash)
            }
        }
    }

    private enum UploadOutcome: Sendable {
        case stored(AssetRecord)
        case failed(ClawlineErrorCode, String)
    }

    /// Splits the multipart body off the loop, moves the file part into place and records it.
    private func storeUpload(_ exchange: HTTPExchange, file: String, boundary: String, claims: DeviceClaims, tokenHash: String) {
        let (assetsDirectory, limit, now) = (self.assetsDirectory, settings.maxUploadBytes, clock.nowMillis())
        let bound = LoopBound((self, exchange), loop: loop)
        DispatchQueue.global().async {
            let outcome = Self.extractUpload(file: file, boundary: boundary, directory: assetsDirectory, limit: limit, userID: claims.sub, now: now)
            try? FileManager.default.removeItem(atPath: file)
            bound.loopExecute { downstream, exchange in
                switch outcome {
                case .failed(let code, let message): downstream.respondError(exchange, code, message)
                case .stored(let asset): downstream.record(asset, for: exchange, claims: claims, tokenHash: tokenHash)
                }
            }
        }
    }

    /// Records an upload whose bytes are in place, if its device may still upload.
    private func record(_ asset: AssetRecord, for exchange: HTTPExchange, claims: DeviceClaims, tokenHash: String) {
        let refuse = { [self] (code: ClawlineErrorCode, message: String) in
            try? FileManager.default.removeItem(atPath: asset.path)
            respondError(exchange, code, message)
        }
        authorizedDevice(claims, tokenHash: tokenHash) { [self] verdict in
            switch verdict {
            case .failure(.serverError): return refuse(.uploadFailedRetryable, "the upload could not be recorded; retry")
            case .failure(let refusal): return refuse(refusal, refusal == .tokenRevoked ? "device revoked" : "unknown device")
            case .success: break
            }
            hub.assets.save(asset) { result in
                guard case .success = result else { return refuse(.uploadFailedRetryable, "the upload could not be recorded; retry") }
                exchange.respond(
                    .json(
                        200,
                        JSONValue.object(["assetId": .string(asset.id), "mimeType": .string(asset.mimeType), "size": .int(asset.size)]).encoded()
                    )
                )
            }
        }
    }

    private static func extractUpload(file: String, boundary: String, directory: String, limit: Int, userID: String, now: Int64) -> UploadOutcome {
        guard let body = try? Data(contentsOf: URL(fileURLWithPath: file), options: .alwaysMapped) else {
            return .failed(.uploadFailedRetryable, "the upload could not be read back; retry")
        }
        guard let form = MultipartForm.parse(body, boundary: boundary) else { return .failed(.invalidMessage, "malformed multipart body") }
        guard let part = form.parts.first(where: { $0.name == "file" }) else {
            return .failed(.invalidMessage, "the multipart field must be named \"file\"")
        }
        guard part.range.count <= limit else { return .failed(.payloadTooLarge, "uploads are limited to \(limit) bytes") }
        let id = Identifiers.newAssetID()
        let path = (directory as NSString).appendingPathComponent(id)
        guard FileManager.default.createFile(atPath: path, contents: body.subdata(in: part.range), attributes: [.posixPermissions: 0o600]) else {
            return .failed(.uploadFailedRetryable, "the upload could not be stored; retry")
        }
        let mime = part.contentType?.isEmpty == false ? part.contentType! : "application/octet-stream"
        return .stored(AssetRecord(id: id, userID: userID, mimeType: mime, size: Int64(part.range.count), path: path, createdAt: now))
    }

    /// Types a browser would run or render as a page: served as bytes instead.
    static let activeContentTypes: Set<String> = [
        "text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml", "text/javascript", "application/javascript",
    ]

    /// User content as download: never sniffed, never rendered as a page of the relay's origin.
    static func assetResponse(_ asset: AssetRecord) -> HTTPResponse {
        let base = asset.mimeType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        let type = activeContentTypes.contains(base) ? "application/octet-stream" : asset.mimeType
        return HTTPResponse(
            status: 200,
            contentType: type,
            headers: [("x-content-type-options", "nosniff"), ("content-disposition", "attachment"), ("content-security-policy", "sandbox")],
            body: .file(path: asset.path)
        )
    }

    private func download(_ exchange: HTTPExchange, assetID: String) {
        guard let (claims, tokenHash) = bearerClaims(exchange) else {
            return respondError(exchange, .authFailed, "missing or invalid bearer token")
        }
        let answer = { [self] (result: Result<AssetRecord, ClawlineErrorCode>) in
            switch result {
            case .success(let asset) where FileManager.default.fileExists(atPath: asset.path): exchange.respond(Self.assetResponse(asset))
            case .success: respondError(exchange, .assetNotFound, "asset file is missing")
            case .failure(.serverError): respondError(exchange, .serverError, "could not read the asset")
            case .failure(let code): respondError(exchange, code, code == .assetNotFound ? "asset not found" : "not allowed")
            }
        }
        authorizedDevice(claims, tokenHash: tokenHash) { [hub] verdict in
            let device: DeviceRecord
            switch verdict {
            case .failure(let code): return answer(.failure(code))
            case .success(let found): device = found
            }
            hub.assets.find(assetID) { result in
                // A user's own assets, and for admins those sent to the admin channel.
                guard case .success(let found) = result else { return answer(.failure(.serverError)) }
                guard let asset = found else { return answer(.failure(.assetNotFound)) }
                if asset.userID == device.userID { return answer(.success(asset)) }
                guard device.isAdmin else { return answer(.failure(.assetNotFound)) }
                hub.history.mentions(assetID: asset.id, audience: ClawlineChannel.adminAudience) { mentioned in
                    switch mentioned {
                    case .success(true): answer(.success(asset))
                    case .success(false): answer(.failure(.assetNotFound))
                    case .failure: answer(.failure(.serverError))
                    }
                }
            }
        }
    }
}

extension ClawlineErrorCode: Error {}

extension LoopBound {
    /// Runs `body` with the bound pair back on its loop.
    func loopExecute<A, B>(_ body: @escaping @Sendable (A, B) -> Void) where Value == (A, B) {
        let copy = self
        loop.execute {
            let (a, b) = copy.value
            body(a, b)
        }
    }
}
