import ClawlineWire
import Foundation
import RelayCore
import RelayTransport

extension ClawlineDownstream {
    public func handleHTTP(_ exchange: HTTPExchange) {
        switch ClawlineHTTP.route(method: exchange.method, path: exchange.path) {
        case .version: exchange.respond(ClawlineHTTP.version)
        case .upgradeRequired: exchange.respond(ClawlineHTTP.upgradeRequired)
        case .upload: upload(exchange)
        case .download(let assetID): download(exchange, assetID: assetID)
        case .unknown: exchange.respond(ClawlineHTTP.error(.noSuchEndpoint))
        }
    }

    /// The verified claims of the exchange's bearer token and the token's hash, or nil. The
    /// exchange's audit rows name the device the token was signed for.
    private func bearerClaims(_ exchange: HTTPExchange) -> (claims: DeviceClaims, tokenHash: String)? {
        guard let token = ClawlineHTTP.bearerToken(exchange.authorization),
            case .success(let claims) = signer.verify(token, nowSeconds: clock.nowMillis() / 1000)
        else { return nil }
        exchange.deviceID = claims.deviceId
        exchange.userID = claims.sub
        return (claims, Digest.sha256Hex(token.utf8))
    }

    /// The device behind a verified bearer token, or why it may not use HTTP (nil: the store failed).
    private func authorizedDevice(
        _ claims: DeviceClaims,
        tokenHash: String,
        _ body: @escaping (Result<DeviceRecord, AuthRefusal>?) -> Void
    ) {
        hub.devices.find(claims.deviceId) { result in
            switch result {
            case .success(let device): body(Self.authorize(device, claims: claims, tokenHash: tokenHash))
            case .failure: body(nil)
            }
        }
    }

    private func upload(_ exchange: HTTPExchange) {
        guard let (claims, tokenHash) = bearerClaims(exchange) else { return exchange.respond(ClawlineHTTP.error(.badBearer)) }
        guard let boundary = exchange.contentType.flatMap(MultipartForm.boundary(fromContentType:)) else {
            return exchange.respond(ClawlineHTTP.error(.notMultipart))
        }
        let temporary = (assetsDirectory as NSString).appendingPathComponent(".upload-\(Identifiers.newUUID())")
        let limit = settings.maxUploadBytes
        exchange.receiveBody(limit: limit + 64 * 1024, into: .file(path: temporary)) { [self] result in
            switch result {
            case .failure(.tooLarge):
                exchange.respond(ClawlineHTTP.error(.uploadTooLarge(limit: limit)))
            case .failure(.closed):
                logger.debug("upload abandoned by its client; nothing kept")
            case .failure(.writeFailed(let reason)):
                logger.error("upload not written", metadata: ["error": "\(reason)"])
                exchange.respond(ClawlineHTTP.error(.uploadNotWritten))
            case .success(let body):
                guard case .file(let path, _) = body else { return exchange.respond(ClawlineHTTP.error(.unexpectedBody)) }
                storeUpload(exchange, file: path, boundary: boundary, claims: claims, tokenHash: tokenHash)
            }
        }
    }

    /// Splits the multipart body off the loop, moves the file part into place and records it.
    private func storeUpload(_ exchange: HTTPExchange, file: String, boundary: String, claims: DeviceClaims, tokenHash: String) {
        let (assetsDirectory, limit, now) = (self.assetsDirectory, settings.maxUploadBytes, clock.nowMillis())
        let bound = LoopBound((self, exchange), loop: loop)
        DispatchQueue.global().async {
            let outcome = ClawlineHTTP.extractUpload(
                file: file,
                boundary: boundary,
                directory: assetsDirectory,
                limit: limit,
                userID: claims.sub,
                now: now
            )
            try? FileManager.default.removeItem(atPath: file)
            bound.loopExecute { downstream, exchange in
                switch outcome {
                case .failed(let error): exchange.respond(ClawlineHTTP.error(error))
                case .stored(let asset): downstream.record(asset, for: exchange, claims: claims, tokenHash: tokenHash)
                }
            }
        }
    }

    /// Records an upload whose bytes are in place, if its device may still upload.
    private func record(_ asset: AssetRecord, for exchange: HTTPExchange, claims: DeviceClaims, tokenHash: String) {
        let refuse = { (error: ClawlineError) in
            try? FileManager.default.removeItem(atPath: asset.path)
            exchange.respond(ClawlineHTTP.error(error))
        }
        authorizedDevice(claims, tokenHash: tokenHash) { [hub] verdict in
            switch verdict {
            case nil: return refuse(.uploadNotRecorded)
            case .failure(let refusal)?: return refuse(ClawlineHTTP.refusal(refusal))
            case .success?: break
            }
            hub.assets.save(asset) { result in
                guard case .success = result else { return refuse(.uploadNotRecorded) }
                exchange.respond(ClawlineHTTP.uploaded(asset))
            }
        }
    }

    private func download(_ exchange: HTTPExchange, assetID: String) {
        guard let (claims, tokenHash) = bearerClaims(exchange) else { return exchange.respond(ClawlineHTTP.error(.badBearer)) }
        let answer = { (result: Result<AssetRecord, ClawlineError>) in
            switch result {
            case .success(let asset) where FileManager.default.fileExists(atPath: asset.path): exchange.respond(ClawlineHTTP.assetResponse(asset))
            case .success: exchange.respond(ClawlineHTTP.error(.assetFileMissing))
            case .failure(let error): exchange.respond(ClawlineHTTP.error(error))
            }
        }
        authorizedDevice(claims, tokenHash: tokenHash) { [hub] verdict in
            let device: DeviceRecord
            switch verdict {
            case nil: return answer(.failure(.assetNotRead))
            case .failure(let refusal)?: return answer(.failure(.notAllowed(refusal)))
            case .success(let found)?: device = found
            }
            hub.assets.find(assetID) { result in
                guard case .success(let found) = result else { return answer(.failure(.assetNotRead)) }
                guard let asset = found else { return answer(.failure(.assetUnknown)) }
                switch ClawlineHTTP.access(of: device, to: asset) {
                case .allowed: answer(.success(asset))
                case .denied: answer(.failure(.assetUnknown))
                case .ifSharedWithAdmins:
                    hub.history.mentions(assetID: asset.id, audience: ClawlineChannel.adminAudience) { mentioned in
                        switch mentioned {
                        case .success(true): answer(.success(asset))
                        case .success(false): answer(.failure(.assetUnknown))
                        case .failure: answer(.failure(.assetNotRead))
                        }
                    }
                }
            }
        }
    }
}

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
