import Foundation
import RelayKit

/// The `data` of one frame type: the payload knows the `type` it travels under.
public protocol CompanionPayload: Encodable, Sendable {
    static var type: String { get }
}

/// One frame in either direction: `{type, requestId, timestamp, data}`. `requestId` is always
/// written (null on broadcasts: the app needs the key), `timestamp` is ISO 8601 with milliseconds.
public struct CompanionFrame<Payload: CompanionPayload>: Encodable, Sendable {
    public var requestID: String?
    public var millis: Int64
    public var data: Payload
    /// The real server's `error: {code, message}`, next to `data` on error frames.
    public var error: ErrorEnvelope?
    /// Set when the frame comes from a device's queue.
    public var queued: QueuedMarks?

    public init(_ data: Payload, requestID: String? = nil, at millis: Int64, error: ErrorEnvelope? = nil, queued: QueuedMarks? = nil) {
        self.data = data
        self.requestID = requestID
        self.millis = millis
        self.error = error
        self.queued = queued
    }

    private enum CodingKeys: String, CodingKey {
        case type, requestId, timestamp, data, error
        case queued = "_queued"
        case queuedAt = "_queuedAt"
        case originalTimestamp = "_originalTimestamp"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Payload.type, forKey: .type)
        try container.encode(requestID, forKey: .requestId)
        try container.encode(CompanionTimestamp.string(millis), forKey: .timestamp)
        try container.encode(data, forKey: .data)
        try container.encodeIfPresent(error, forKey: .error)
        if let queued {
            try container.encode(true, forKey: .queued)
            try container.encode(CompanionTimestamp.string(queued.queuedAt), forKey: .queuedAt)
            try container.encode(CompanionTimestamp.string(queued.originalAt), forKey: .originalTimestamp)
        }
    }

    /// The frame's text.
    public func encoded() -> String { CompanionJSON.encode(self) }
}

/// `_queued: true, _queuedAt, _originalTimestamp` on an event replayed from a device's queue.
public struct QueuedMarks: Sendable, Equatable {
    public var queuedAt: Int64
    public var originalAt: Int64

    public init(queuedAt: Int64, originalAt: Int64) {
        self.queuedAt = queuedAt
        self.originalAt = originalAt
    }
}

/// The real server's error field: `{code, message}`.
public struct ErrorEnvelope: Codable, Sendable, Equatable {
    public var code: String
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}

/// The one encoder of Companion JSON: compact, keys sorted (so a frame's bytes do not depend on
/// how it was built), slashes as they are (paths and dates stay readable).
public enum CompanionJSON {
    public static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// An optional field that is always written, as `null` when it has no value (the app and the
/// real server tell `null` from a missing key in a few places).
@propertyWrapper
public struct AlwaysPresent<Value: Encodable & Sendable & Equatable>: Encodable, Sendable, Equatable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}
