import RelayKit

extension GatewayLinkMachine {
    /// `gateway-client` is the id today's gateways know for a program talking to them; the mode
    /// says what it is (backend for an operator account, node for a passed-through node).
    static let clientID = "gateway-client"

    /// The signed `connect` answering `nonce`: protocol 3..4, the device's key and signature, and
    /// its token when it has one.
    func connectParams(nonce: String, signedAt: Int64) -> ConnectParams {
        var params = ConnectParams.signed(
            client: ConnectParams.Client(id: Self.clientID, displayName: hello.displayName, version: "0.2", platform: "linux", mode: hello.mode),
            role: hello.role,
            scopes: hello.scopes,
            protocols: 3...4,
            token: credentials.token,
            device: (credentials.deviceID, credentials.publicKey),
            signedAt: signedAt,
            nonce: nonce,
            signsV2: signsV2,
            sign: credentials.sign
        )
        params.caps = hello.caps
        params.commands = hello.commands
        params.permissions = hello.permissions
        return params
    }

    /// `hello-ok`: keep the device token it issues and follow its tick policy (two silent
    /// intervals mean a dead link). A refusal is reported at once and the socket closed; the
    /// retry says nothing more.
    mutating func helloAnswered(_ response: GatewayResponse<JSONValue>) -> [Action] {
        guard var socket = lifecycle.session, response.ok else { return refused(response.error) }
        let hello = response.payload.flatMap { GatewayJSON.decode(HelloOk.self, from: $0) }
        var actions: [Action] = []
        if let token = hello?.auth?.deviceToken {
            credentials.token = token
            actions.append(.own(.storeToken(token)))
        }
        let tick = Int(min(max(hello?.policy?.tickIntervalMs ?? Int64(Self.defaultTickMillis), 1_000), 600_000))
        let version = hello?.protocol ?? 3
        socket.step = .ready(protocolVersion: version)
        return actions
            + lifecycle.establish(socket, detail: "\(endpoint) (protocol \(version))", tickMillis: tick, watchdog: .silence(millis: 2 * tick))
    }

    private mutating func refused(_ error: GatewayError?) -> [Action] {
        let detailCode = error?.detailCode ?? ""
        if detailCode == "PAIRING_REJECTED" || error?.details?.pauseReconnect == true {
            // Revoked or declined there: asking again changes nothing until a person acts.
            let message = error?.message ?? ""
            return lifecycle.stop(message.isEmpty ? "the gateway refused device \(credentials.deviceID) (\(detailCode))" : message)
        }
        if error?.code == .notPaired {
            let requestID = error?.details?.requestId ?? "?"
            return closeAfter(.awaitingApproval, "awaiting approval (requestId \(requestID), device \(credentials.deviceID))")
        }
        if detailCode == GatewayError.deviceTokenMismatch.detailCode || (detailCode == "AUTH_TOKEN_MISMATCH" && !credentials.token.isEmpty) {
            // The gateway no longer takes our device token (rotated or revoked there): drop it and
            // connect again without it, which pairs anew (or reconnects on the key, if still paired).
            credentials.token = ""
            lifecycle.resetBackoff()
            return [.own(.storeToken(""))]
                + closeAfter(.retrying, "\(detailCode): the gateway refused this account's device token; dropped it and connecting again to pair")
        }
        if detailCode == DeviceAuth.Failure.badSignature.rawValue, !signsV2 {
            signsV2 = true
            lifecycle.resetBackoff()
            return closeAfter(.retrying, "the gateway refused a v3 device signature; trying v2")
        }
        let code = error.map(\.code.rawValue).flatMap { $0.isEmpty ? nil : $0 } ?? "error"
        return closeAfter(.badCredentials, "\(code): \(error?.message ?? "") \(detailCode)")
    }

    private mutating func closeAfter(_ state: LinkState, _ detail: String) -> [Action] {
        lifecycle.report(state, detail) + lifecycle.close(LinkClosing(nil), code: 1000)
    }
}
