import Foundation
import RelayCore
import RelayStore
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

    /// The device a verified token speaks for, or why it may not: `auth_failed` for an unknown
    /// device or a token superseded by a newer one, `token_revoked` for a revoked or denied one.
    /// The one check behind WebSocket `auth` and HTTP Bearer alike.
    static func authorizedDevice(_ db: StoreTransaction, claims: DeviceClaims, tokenHash: String) throws -> Result<DeviceRecord, ClawlineErrorCode> {
        guard let device = try DeviceQueries.fetch(db, id: claims.deviceId), device.userID == claims.sub else { return .failure(.authFailed) }
        guard device.status == .approved else { return .failure(.tokenRevoked) }
        if let stored = device.tokenHash, stored != tokenHash { return .failure(.authFailed) }
        return .success(device)
    }

    /// Nil when the device may use HTTP, else the error to answer.
    static func checkDevice(_ db: StoreTransaction, claims: DeviceClaims, tokenHash: String) throws -> ClawlineErrorCode? {
        if case .failure(let refusal) = try authorizedDevice(db, claims: claims, tokenHash: tokenHash) { return refusal }
        return nil
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
        let (assetsDirectory, limit, now, store) = (self.assetsDirectory, settings.maxUploadBytes, clock.nowMillis(), self.store)
        let bound = LoopBound((self, exchange), loop: loop)
        DispatchQueue.global().async {
            let outcome = Self.extractUpload(file: file, boundary: boundary, directory: assetsDirectory, limit: limit, userID: claims.sub, now: now)
            try? FileManager.default.removeItem(atPath: file)
            guard case .stored(let asset) = outcome else {
                return bound.loopExecute { downstream, exchange in
                    if case .failed(let code, let message) = outcome { downstream.respondError(exchange, code, message) }
                }
            }
            store.perform({ db -> ClawlineErrorCode? in
                if let refusal = try Self.checkDevice(db, claims: claims, tokenHash: tokenHash) { return refusal }
                try AssetQueries.insert(db, asset)
                return nil
            }) { result in
                let (downstream, exchange) = bound.value
                switch result {
                case .success(nil):
                    exchange.respond(
                        .json(
                            200,
                            JSONValue.object(["assetId": .string(asset.id), "mimeType": .string(asset.mimeType), "size": .int(asset.size)]).encoded()
                        )
                    )
                case .success(let refusal?):
                    try? FileManager.default.removeItem(atPath: asset.path)
                    downstream.respondError(exchange, refusal, refusal == .tokenRevoked ? "device revoked" : "unknown device")
                case .failure:
                    try? FileManager.default.removeItem(atPath: asset.path)
                    downstream.respondError(exchange, .uploadFailedRetryable, "the upload could not be recorded; retry")
                }
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
        store.perform(
            { db -> Result<AssetRecord, ClawlineErrorCode> in
                let device: DeviceRecord
                switch try Self.authorizedDevice(db, claims: claims, tokenHash: tokenHash) {
                case .failure(let refusal): return .failure(refusal)
                case .success(let found): device = found
                }
                // A user's own assets, and for admins those sent to the admin channel.
                guard let asset = try AssetQueries.fetch(db, id: assetID) else { return .failure(.assetNotFound) }
                let readable =
                    try asset.userID == device.userID
                    || device.isAdmin && EventQueries.mentions(db, assetID: asset.id, audience: ClawlineChannel.adminAudience)
                guard readable else { return .failure(.assetNotFound) }
                return .success(asset)
            },
            completion: { [self] result in
                switch result {
                case .success(.success(let asset)) where FileManager.default.fileExists(atPath: asset.path):
                    exchange.respond(Self.assetResponse(asset))
                case .success(.success):
                    respondError(exchange, .assetNotFound, "asset file is missing")
                case .success(.failure(let code)):
                    respondError(exchange, code, code == .assetNotFound ? "asset not found" : "not allowed")
                case .failure:
                    respondError(exchange, .serverError, "could not read the asset")
                }
            }
        )
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
