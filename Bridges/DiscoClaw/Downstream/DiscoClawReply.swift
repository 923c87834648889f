import DiscoClawWire
import RelayTransport

/// The HTTP responses the listener writes: a typed body, or an entry of the error table.
enum DiscoClawReply {
    static func json(_ status: Int, _ body: some Encodable) -> HTTPResponse { HTTPResponse(status: status, body: .bytes(DiscoClawJSON.bytes(body))) }

    static func error(_ error: DiscoClawError) -> HTTPResponse { json(error.status, error.body) }

    static let noContent = HTTPResponse(status: 204, body: .bytes([]))
}
