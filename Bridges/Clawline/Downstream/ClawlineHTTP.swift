import ClawlineWire
import Foundation
import RelayCore
import RelayTransport

/// The REST side of the listener as pure functions over values: which route a request takes,
/// what a bearer token is, who may download an asset, the responses. `ClawlineDownstream`
/// performs them (reading bodies, the core, files).
enum ClawlineHTTP {
    enum Route: Equatable {
        case version
        /// A plain request to the WebSocket path.
        case upgradeRequired
        case upload
        case download(assetID: String)
        case unknown
    }

    static func route(method: String, path: String) -> Route {
        switch (method, path) {
        case ("GET", "/version"): .version
        case (_, "/ws"): .upgradeRequired
        case ("POST", "/upload"): .upload
        case ("GET", let path) where path.hasPrefix("/download/"): .download(assetID: String(path.dropFirst("/download/".count)))
        default: .unknown
        }
    }

    static func error(_ error: ClawlineError) -> HTTPResponse {
        HTTPResponse(status: error.code.httpStatus, body: .bytes(Array(ServerFrame.error(error.frame).encoded().utf8)))
    }

    static let version = HTTPResponse.json(200, FrameEncoder.encode(VersionBody()))

    static var upgradeRequired: HTTPResponse {
        HTTPResponse(
            status: 426,
            headers: [("upgrade", "websocket")],
            body: .bytes(Array(ServerFrame.error(ClawlineError.upgradeRequired.frame).encoded().utf8))
        )
    }

    static func uploaded(_ asset: AssetRecord) -> HTTPResponse {
        .json(200, FrameEncoder.encode(UploadBody(assetId: asset.id, mimeType: asset.mimeType, size: asset.size), sorted: true))
    }

    /// The token of an `Authorization: Bearer …` header (the scheme in any case), or nil.
    static func bearerToken(_ header: String?) -> String? {
        guard let header, header.lowercased().hasPrefix("bearer ") else { return nil }
        let token = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    /// The HTTP error for a device its token may not use.
    static func refusal(_ reason: AuthRefusal) -> ClawlineError { reason == .tokenRevoked ? .deviceRevoked : .unknownDevice }

    /// Who may download an asset: its user, and admins for the assets sent to the admin channel.
    enum Access: Equatable {
        case allowed
        case denied
        /// Allowed if the admin channel's history mentions it.
        case ifSharedWithAdmins
    }

    static func access(of device: DeviceRecord, to asset: AssetRecord) -> Access {
        if asset.userID == device.userID { return .allowed }
        return device.isAdmin ? .ifSharedWithAdmins : .denied
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

    enum UploadOutcome: Sendable {
        case stored(AssetRecord)
        case failed(ClawlineError)
    }

    /// Splits an upload's multipart body (a file) and moves its `file` part into the assets
    /// folder. Blocking file work: run it off the loop.
    static func extractUpload(file: String, boundary: String, directory: String, limit: Int, userID: String, now: Int64) -> UploadOutcome {
        guard let body = try? Data(contentsOf: URL(fileURLWithPath: file), options: .alwaysMapped) else { return .failed(.uploadNotReadBack) }
        guard let form = MultipartForm.parse(body, boundary: boundary) else { return .failed(.malformedMultipart) }
        guard let part = form.parts.first(where: { $0.name == "file" }) else { return .failed(.wrongField) }
        guard part.range.count <= limit else { return .failed(.uploadTooLarge(limit: limit)) }
        let id = Identifiers.newAssetID()
        let path = (directory as NSString).appendingPathComponent(id)
        guard FileManager.default.createFile(atPath: path, contents: body.subdata(in: part.range), attributes: [.posixPermissions: 0o600]) else {
            return .failed(.uploadNotStored)
        }
        let mime = part.contentType?.isEmpty == false ? part.contentType! : "application/octet-stream"
        return .stored(AssetRecord(id: id, userID: userID, mimeType: mime, size: Int64(part.range.count), path: path, createdAt: now))
    }
}
