import RelayCore

extension GatewayLinkMachine {
    /// `gateway-client` is the id today's gateways know for a program talking to them; the mode
    /// says what it is (backend for an operator account, node for a passed-through node).
    static let clientID = "gateway-client"

    /// The signed `connect` answering `nonce`: protocol 3..4, the device's key and signature, and
    /// its token when it has one.
    func connectParams(nonce: String, signedAt: Int64) -> JSONValue {
        let token = credentials.token
        let fields = DeviceAuth.SignedFields(
            deviceID: credentials.deviceID,
            clientID: Self.clientID,
            clientMode: hello.mode,
            role: hello.role,
            scopes: hello.scopes,
            signedAtMillis: signedAt,
            token: token,
            nonce: nonce,
            platform: "linux",
            deviceFamily: ""
        )
        let payload = signsV2 ? DeviceAuth.payloadV2(fields) : DeviceAuth.payloadV3(fields)
        var params: [String: JSONValue] = [
            "minProtocol": .int(3), "maxProtocol": .int(4),
            "client": .object([
                "id": .string(Self.clientID), "displayName": .string(hello.displayName), "version": .string("0.2"),
                "platform": .string("linux"), "mode": .string(hello.mode),
            ]),
            "role": .string(hello.role), "scopes": .array(hello.scopes.map(JSONValue.string)), "caps": .array(hello.caps),
            "commands": .array(hello.commands.map(JSONValue.string)), "permissions": hello.permissions,
            "device": .object([
                "id": .string(credentials.deviceID), "publicKey": .string(credentials.publicKey),
                "signature": .string(credentials.sign(payload)), "signedAt": .int(signedAt), "nonce": .string(nonce),
            ]),
        ]
        if !token.isEmpty { params["auth"] = .object(["token": .string(token)]) }
        return .object(params)
    }

    /// `hello-ok`: keep the device token it issues and follow its tick policy (two silent
    /// intervals mean a dead link). A refusal is reported at once and the socket closed; the
    /// retry says nothing more.
    mutating func helloAnswered(_ response: JSONValue) -> [Action] {
        guard var socket = lifecycle.session, response["ok"]?.boolValue == true else { return refused(response["error"] ?? .null) }
        let payload = response["payload"] ?? .null
        var actions: [Action] = []
        if let token = payload["auth"]?["deviceToken"]?.stringValue {
            credentials.token = token
            actions.append(.own(.storeToken(token)))
        }
        let tick = Int(min(max(payload["policy"]?["tickIntervalMs"]?.intValue ?? Int64(Self.defaultTickMillis), 1_000), 600_000))
        let version = payload["protocol"]?.intValue ?? 3
        socket.step = .ready(protocolVersion: version)
        return actions
            + lifecycle.establish(socket, detail: "\(endpoint) (protocol \(version))", tickMillis: tick, watchdog: .silence(millis: 2 * tick))
    }

    private mutating func refused(_ error: JSONValue) -> [Action] {
        let code = error["code"]?.stringValue
        let detailCode = error["details"]?["code"]?.stringValue ?? ""
        if code == "NOT_PAIRED" {
            let requestID = error["details"]?["requestId"]?.stringValue ?? "?"
            return closeAfter(.awaitingApproval, "awaiting approval (requestId \(requestID), device \(credentials.deviceID))")
        }
        if detailCode == "AUTH_DEVICE_TOKEN_MISMATCH" || (detailCode == "AUTH_TOKEN_MISMATCH" && !credentials.token.isEmpty) {
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
        return closeAfter(.badCredentials, "\(code ?? "error"): \(error["message"]?.stringValue ?? "") \(detailCode)")
    }

    private mutating func closeAfter(_ state: LinkState, _ detail: String) -> [Action] {
        lifecycle.report(state, detail) + lifecycle.close(LinkClosing(nil), code: 1000)
    }
}
