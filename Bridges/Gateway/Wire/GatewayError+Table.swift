import RelayKit

/// Every error the relay's gateway sends, in one place: code, message, `details.code` and, for a
/// refused `connect`, the close code after it (1008 unless said otherwise).
extension GatewayError {
    public static func invalid(_ message: String, code detailCode: String? = nil) -> GatewayError {
        GatewayError(.invalidRequest, message, details: detailCode.map(Details.init(code:)))
    }

    public static func unavailable(_ message: String, retryable: Bool = false) -> GatewayError {
        GatewayError(.unavailable, message, retryable: retryable)
    }

    // MARK: Frames and the handshake

    /// Answered with an `error` event, then close 1008 "invalid frame", in every state.
    public static let notJSON = invalid("the frame is not valid JSON")
    /// JSON that is not a `req`: a response when it has an id, else an `error` event; closes before connect only.
    public static let notARequest = invalid("expected a req frame {type:\"req\", id, method, params?}")
    /// An `error` event, then close 1008 "handshake timeout".
    public static let handshakeTimeout = invalid("connect was not sent within the handshake timeout")
    public static let connectFirst = invalid("the first request must be connect")
    public static let alreadyConnected = invalid("already connected")
    public static func unknownMethod(_ method: String) -> GatewayError { invalid("unknown method \(method.prefix(64))") }

    // MARK: Connect

    public static let protocolFieldsRequired = invalid("minProtocol and maxProtocol are required integers")
    public static func tooLarge(_ field: String) -> GatewayError { invalid("\(field) is too large") }

    /// No version in common; close 1002.
    public static func protocolMismatch(clientMin: Int64, clientMax: Int64, supported: ClosedRange<Int64>) -> GatewayError {
        var details = Details(code: "PROTOCOL_MISMATCH")
        details.clientMinProtocol = clientMin
        details.clientMaxProtocol = clientMax
        details.expectedProtocol = supported.upperBound
        details.minProtocol = supported.lowerBound
        details.maxProtocol = supported.upperBound
        details.minimumProbeProtocol = supported.lowerBound
        return GatewayError(.invalidRequest, "protocol mismatch", details: details, closeCode: .protocolError)
    }

    public static let clientFieldsRequired = invalid("client needs id, version, platform and a known mode")
    public static let invalidRole = invalid("invalid role")
    public static let deviceIdentityRequired = GatewayError(
        .notPaired,
        "device identity required",
        details: Details(code: "DEVICE_IDENTITY_REQUIRED")
    )
    public static let deviceFieldsRequired = invalid("device needs id, publicKey, signature, signedAt and nonce")
    /// The device's key, id, freshness, nonce or signature failed (`DEVICE_AUTH_*`).
    public static func deviceAuth(_ failure: DeviceAuth.Failure) -> GatewayError { invalid(failure.message, code: failure.rawValue) }

    /// `auth.token` is neither the shared gateway token nor this device's token.
    public static func tokenMismatch(canRetryWithDeviceToken canRetry: Bool) -> GatewayError {
        var details = Details(code: "AUTH_TOKEN_MISMATCH")
        details.authReason = "token_mismatch"
        details.canRetryWithDeviceToken = canRetry
        details.recommendedNextStep = canRetry ? "retry_with_device_token" : "update_auth_credentials"
        return GatewayError(.invalidRequest, "unauthorized: gateway token mismatch (provide gateway auth token)", details: details)
    }

    /// The device token presented is not the device's current one for the role.
    public static let deviceTokenMismatch: GatewayError = {
        var details = Details(code: "AUTH_DEVICE_TOKEN_MISMATCH")
        details.authReason = "device_token_mismatch"
        details.canRetryWithDeviceToken = false
        details.recommendedNextStep = "update_auth_credentials"
        return GatewayError(.invalidRequest, "unauthorized: device token mismatch (rotate/reissue device token)", details: details)
    }()

    /// The device waits for approval (`reason`: not-paired, role-upgrade, scope-upgrade, metadata-upgrade).
    public static func pairingRequired(requestID: String, reason: String, deviceID: String, role: String, scopes: [String]) -> GatewayError {
        var details = Details(code: "PAIRING_REQUIRED")
        details.requestId = requestID
        details.reason = reason
        details.deviceId = deviceID
        details.requestedRole = role
        details.requestedScopes = scopes
        details.remediationHint = "approve it with `clawrelay devices approve \(deviceID)` or device.pair.approve"
        let message =
            switch reason {
            case "role-upgrade": "pairing required: device is asking for a higher role than it was approved for"
            case "scope-upgrade": "pairing required: device is asking for more scopes than it was approved for"
            case "metadata-upgrade": "pairing required: device identity changed and must be re-approved"
            default: "pairing required: device is not approved yet"
            }
        return GatewayError(.notPaired, message, details: details)
    }

    /// The device was revoked or denylisted on the relay: OpenClaw's `PAIRING_REJECTED` (its
    /// clients stop reconnecting and say the pairing was declined), with the command that lifts it.
    public static func pairingRejected(deviceID: String, revoked: Bool) -> GatewayError {
        var details = Details(code: "PAIRING_REJECTED")
        details.deviceId = deviceID
        details.reason = revoked ? "revoked" : "denied"
        details.pauseReconnect = true
        details.remediationHint = "run `clawrelay devices allow \(deviceID)` on the relay"
        let message = "this device was \(revoked ? "revoked" : "denylisted"): run clawrelay devices allow \(deviceID) on the relay"
        return GatewayError(.notPaired, message, details: details)
    }

    public static func pairingRateLimited(retryAfterMillis: Int64) -> GatewayError {
        var details = Details(code: "PAIRING_RATE_LIMITED")
        details.retryAfterMs = retryAfterMillis
        return GatewayError(.unavailable, "too many pending pairing requests; try later", details: details)
    }

    /// The core could not decide; close 1011.
    public static let storeUnavailable = GatewayError(.unavailable, "store unavailable", closeCode: .internalError)

    // MARK: Methods

    /// OpenClaw's `missingScopeErrorShape` (`packages/gateway-protocol/src/schema/error-codes.ts`): its
    /// clients read `details` first, else the message's `missing scope: <scope>`.
    public static func missingScope(_ scope: String) -> GatewayError {
        var details = Details(code: "MISSING_SCOPE")
        details.missingScope = scope
        details.requiredScopes = [scope]
        return GatewayError(.forbidden, "missing scope: \(scope)", details: details)
    }
    public static let nodeRoleRefused = invalid("unauthorized role: node")
    public static let onlyNodesReportResults = invalid("only nodes report invoke results")
    public static let onlyNodesSendEvents = invalid("only nodes send node.event")
    public static let onlyNodesHavePendingWork = invalid("only nodes have pending work")
    public static let unknownSession = invalid("unknown session", code: "UNKNOWN_SESSION")
    /// A `backend:<name>:…` session key for a new conversation on a backend the relay does not have.
    public static func unknownBackend(_ name: String, configured: [String]) -> GatewayError {
        invalid("no backend named \(name.prefix(64)); configured: \(configured.joined(separator: ", "))", code: "UNKNOWN_BACKEND")
    }
    public static let sessionUnavailable = unavailable("the session could not be opened")

    // Pairing and bots
    public static let unknownRequestID = invalid("unknown requestId")
    public static let deviceIDRequired = invalid("deviceId required")
    public static let deviceAndRoleRequired = invalid("deviceId and role are required")
    public static let tokenChangeDenied = invalid("device token change denied")
    public static let unknownGatewayDevice = invalid("unknown gateway deviceId")
    public static let unknownBots = invalid("requestedBots must name configured bots or be \"*\"")
    public static let noBotPairing = invalid("no bot pairing for that deviceId")
    public static let pairingTokenRequired = GatewayError(.notPaired, "a pairing token or operator.pairing is required")
    public static let pairingTokenRefused = GatewayError(.notPaired, "the pairing token is unknown, used or expired")

    // Chat and sessions
    public static let sessionKeyRequired = invalid("sessionKey required")
    public static let messageRequired = invalid("message is required")
    public static let idempotencyKeyReused = invalid("idempotencyKey reused with a different message")
    public static let tooManyQueued = unavailable("too many queued messages", retryable: true)
    public static let messageNotStored = unavailable("the message could not be stored")
    public static let keyRequired = invalid("key required")
    public static func offsetTooLarge(max: Int64) -> GatewayError { invalid("offset must be at most \(max)") }
    public static func tooManySubscriptions(max: Int) -> GatewayError { invalid("at most \(max) sessions may be subscribed per connection") }
    public static let seqRequired = invalid("seq must be a non-negative integer")
    public static let sessionsUnreadable = unavailable("the sessions could not be read")
    public static let sessionUnreadable = unavailable("the session could not be read")
    public static let readNotStored = unavailable("the read position could not be stored")
    public static let injectNotStored = unavailable("the message could not be stored")
    public static func labelTooLong(maxBytes: Int) -> GatewayError { invalid("label is longer than \(maxBytes) bytes") }
    public static let labelNotString = invalid("label must be a string or null")

    // Approvals (OpenClaw's `approval-shared.ts`: the reason goes in `details.reason`, which its apps classify on)
    /// Unknown, expired, cancelled or another kind's: `details.reason` `APPROVAL_NOT_FOUND`.
    public static let approvalNotFound: GatewayError = {
        var details = Details()
        details.reason = "APPROVAL_NOT_FOUND"
        details.remediation = "Re-request the action; pending approvals are cleared after expiry or restart."
        return GatewayError(.invalidRequest, "unknown or expired approval id", details: details)
    }()
    /// Someone decided first, differently (the same decision again is answered `{ok: true}`).
    public static let approvalAlreadyResolved: GatewayError = {
        var details = Details()
        details.reason = "APPROVAL_ALREADY_RESOLVED"
        return GatewayError(.invalidRequest, "approval already resolved", details: details)
    }()
    public static let approvalAmbiguous = invalid("ambiguous approval id prefix; use the full id")
    public static let approvalIDRequired = invalid("id is required")
    public static let approvalParamsRequired = invalid("id and decision are required")
    public static let invalidDecision = invalid("invalid decision")
    /// The approval does not offer that decision.
    public static func decisionUnavailable(_ decision: String) -> GatewayError {
        var details = Details()
        details.reason = decision == "allow-always" ? "APPROVAL_ALLOW_ALWAYS_UNAVAILABLE" : "APPROVAL_DECISION_UNAVAILABLE"
        return GatewayError(.invalidRequest, "\(decision) is unavailable for this command", details: details)
    }

    // Runs
    public static let runIDRequired = invalid("runId must be a non-empty string of at most 256 bytes")
    public static let timeoutNotInteger = invalid("timeoutMs must be a non-negative integer")
    public static let tooManyWaits = unavailable("too many agent.wait calls waiting on this connection", retryable: true)

    // Routing (OpenClaw's `respondChatSessionRoutingChanged`: its apps classify on `details.reason`)
    public static let sessionRoutingChanged: GatewayError = {
        var details = Details()
        details.reason = "session-routing-changed"
        return GatewayError(.invalidRequest, "session routing changed; review and retry", details: details)
    }()
    public static let routingContractNotString = invalid("expectedSessionRoutingContract must be a string")
    public static let sessionKeyNotString = invalid("sessionKey must be a string")
    public static func unknownAgent(_ id: String) -> GatewayError { invalid("unknown agent id \"\(id.prefix(64))\"") }

    // Commands
    public static let invalidCommandScope = invalid("scope must be one of text, native, both")

    // System
    public static let unknownModelView = invalid("view must be one of default, configured, provider-config, all")
    public static let identityUnreadable = unavailable("the gateway identity could not be read")

    // Nodes
    public static let invalidMaxItems = invalid("maxItems must be an integer from 1 to 10")
    public static let ackIDsRequired = invalid("ids must be 1 to 100 non-empty strings of at most 256 bytes")
    public static let nodeAndCommandRequired = invalid("nodeId and command are required")
    public static func undeclaredCommand(_ command: String) -> GatewayError { invalid("the node does not declare \(command.prefix(64))") }

    public static let nodeNotConnected = GatewayError(.unavailable, "node not connected", details: Details(code: "NOT_CONNECTED"))

    public static let invokeTimedOut = nodeFailed("node invoke timed out", nodeError: NodeError(code: "TIMEOUT").json)

    public static let nodeInBackground = nodeFailed(
        "node is in the background",
        nodeError: NodeError(code: "NODE_BACKGROUND_UNAVAILABLE", message: "command requires foreground").json
    )

    /// The node answered `ok: false` with its own error (`{code: "UNKNOWN"}` when it gave none).
    public static func nodeReported(_ nodeError: JSONValue) -> GatewayError { nodeFailed("node reported an error", nodeError: nodeError) }

    private static func nodeFailed(_ message: String, nodeError: JSONValue) -> GatewayError {
        var details = Details()
        details.nodeError = nodeError
        return GatewayError(.unavailable, message, details: details)
    }
}
