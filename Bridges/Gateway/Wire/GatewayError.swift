import RelayKit

/// A gateway error (`res.error`, the `error` event's payload): a code from the protocol's set,
/// a message, machine-readable details, and whether a retry may work. Every error the relay
/// sends is named in `GatewayError+Table.swift`, with the close code that follows it when it
/// refuses a `connect`.
public struct GatewayError: Error, Codable, Equatable, Sendable {
    /// `error.code`. Read as any string (newer gateways add codes, e.g. `APPROVAL_NOT_FOUND`).
    public struct Code: RawRepresentable, Codable, Hashable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let notLinked = Code(rawValue: "NOT_LINKED")
        public static let notPaired = Code(rawValue: "NOT_PAIRED")
        public static let agentTimeout = Code(rawValue: "AGENT_TIMEOUT")
        public static let invalidRequest = Code(rawValue: "INVALID_REQUEST")
        public static let unavailable = Code(rawValue: "UNAVAILABLE")
        /// The caller lacks a scope (today's gateways; older ones said `INVALID_REQUEST`).
        public static let forbidden = Code(rawValue: "FORBIDDEN")

        public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
    }

    /// `error.details`: what clients act on. Only the fields set are written.
    public struct Details: Codable, Equatable, Sendable {
        /// The machine-readable reason (`PAIRING_REQUIRED`, `AUTH_DEVICE_TOKEN_MISMATCH`, …).
        public var code: String?
        public var authReason: String?
        public var canRetryWithDeviceToken: Bool?
        public var recommendedNextStep: String?
        public var clientMinProtocol: Int64?
        public var clientMaxProtocol: Int64?
        public var expectedProtocol: Int64?
        public var minProtocol: Int64?
        public var maxProtocol: Int64?
        public var minimumProbeProtocol: Int64?
        public var requestId: String?
        public var reason: String?
        public var deviceId: String?
        public var requestedRole: String?
        public var requestedScopes: [String]?
        public var remediationHint: String?
        /// The client should stop reconnecting until a person acts (OpenClaw's refused pairing).
        public var pauseReconnect: Bool?
        /// What a client can do about it (an approval that is gone: ask again).
        public var remediation: String?
        /// `MISSING_SCOPE`: the scope the method needs, and every scope that would do.
        public var missingScope: String?
        public var requiredScopes: [String]?
        public var retryAfterMs: Int64?
        /// What a node answered (its own `{code, message}`), or the relay's `{code: "TIMEOUT"}`.
        public var nodeError: JSONValue?

        public init(code: String? = nil) { self.code = code }
    }

    public var code: Code
    public var message: String
    public var details: Details?
    /// The client may send the same request again later (written only when true).
    public var retryable: Bool?
    public var retryAfterMs: Int64?
    /// The close code that follows when this error refuses a `connect` (never written).
    public var closeCode = GatewayCloseCode.policyViolation

    public init(_ code: Code, _ message: String, details: Details? = nil, retryable: Bool = false, closeCode: GatewayCloseCode = .policyViolation) {
        self.code = code
        self.message = message
        self.details = details
        self.retryable = retryable ? true : nil
        self.closeCode = closeCode
    }

    private enum CodingKeys: String, CodingKey {
        case code, message, details, retryable, retryAfterMs
    }

    /// Tolerant: whatever a gateway left out reads as empty.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = Code(rawValue: try container.decodeIfPresent(String.self, forKey: .code) ?? "")
        message = try container.decodeIfPresent(String.self, forKey: .message) ?? ""
        details = try container.decodeIfPresent(Details.self, forKey: .details)
        retryable = try container.decodeIfPresent(Bool.self, forKey: .retryable)
        retryAfterMs = try container.decodeIfPresent(Int64.self, forKey: .retryAfterMs)
    }

    /// `details.code`, or "" when there is none.
    public var detailCode: String { details?.code ?? "" }
}

/// The close codes a gateway socket ends with, and their reasons.
public enum GatewayCloseCode: UInt16, Sendable {
    case normal = 1000
    /// The client's protocol range holds no version this gateway speaks.
    case protocolError = 1002
    /// A refused connect, a frame that is not JSON, the handshake timeout, a device cut off, a
    /// node replaced by a newer socket, a slow consumer (the transport's).
    case policyViolation = 1008
    /// A message past the size limit, refused from its header (the transport's).
    case messageTooBig = 1009
    /// The store failed while a connect was decided.
    case internalError = 1011
    /// The relay is stopping (after a `shutdown` event).
    case serviceRestart = 1012
    /// A client drops a gateway that sent no tick for two intervals.
    case tickTimeout = 4000
}
