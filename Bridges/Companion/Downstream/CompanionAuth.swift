import CompanionWire
import Foundation
import RelayCore
import RelayTransport

/// Who is asking: the shared token (`?token=` or `Authorization: Bearer`) and the device a
/// request comes from. Pure over the request's headers.
enum CompanionAuth {
    /// Nil when the request presents `token`; else the REST refusal (a socket is closed 1008).
    static func refusal(_ headers: RequestHeaders, token: String) -> CompanionHTTPError? {
        guard let presented = headers.queryValue("token") ?? headers.bearerToken else { return .missingToken }
        return Digest.sha256Hex(presented) == Digest.sha256Hex(token) ? nil : .invalidToken
    }

    /// `x-device-id` when sent, else a hash of the user agent (the app sends neither).
    static func deviceID(for headers: RequestHeaders) -> String {
        if let given = headers.custom["x-device-id"]?.trimmingCharacters(in: .whitespaces), !given.isEmpty, given.utf8.count <= 128 {
            return "companion:" + given
        }
        return "companion:ua:" + Digest.sha256Hex(headers.userAgent ?? "").prefix(16)
    }

    /// The name `clawrelay devices list` shows for a new device.
    static func deviceName(for headers: RequestHeaders) -> String? { headers.custom["x-device-id"] ?? headers.userAgent }
}
