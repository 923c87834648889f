import RelayKit

extension ServerFrame {
    /// A provider's frame as the relay's upstream account reads it; nil when the text is not a JSON
    /// object with a string `type`.
    ///
    /// Tolerant reader: unknown types become `.other`, unknown fields are ignored, missing ones take
    /// a default, and the variants public providers send (no `channelType`, `auth_result`
    /// `rate_limited`) are accepted. A frame missing what its use needs (an `ack` or `message`
    /// without an id, a `typing` without `active` or from the user) is `.other`.
    public static func decode(_ bytes: [UInt8]) -> ServerFrame? {
        guard let frame = JSONValue.parse(bytes), let type = frame["type"]?.stringValue else { return nil }
        switch type {
        case "pair_result":
            return .pairResult(
                PairResult(
                    success: frame["success"]?.boolValue == true,
                    token: frame["token"]?.stringValue,
                    userId: frame["userId"]?.stringValue,
                    reason: frame["reason"]?.stringValue
                )
            )
        case "auth_result":
            return .authResult(
                AuthResult(
                    success: frame["success"]?.boolValue == true,
                    reason: frame["reason"]?.stringValue,
                    userId: frame["userId"]?.stringValue,
                    sessionId: frame["sessionId"]?.stringValue,
                    isAdmin: frame["isAdmin"]?.boolValue,
                    replayCount: Int(clamping: max(0, frame["replayCount"]?.intValue ?? 0)),
                    replayTruncated: frame["replayTruncated"]?.boolValue == true,
                    historyReset: frame["historyReset"]?.boolValue == true
                )
            )
        case "pair_approval_request":
            guard let deviceID = frame["deviceId"]?.stringValue else { return .other(type: type) }
            return .pairApprovalRequest(
                PairApprovalRequest(deviceId: deviceID, claimedName: frame["claimedName"]?.stringValue, deviceInfo: frame["deviceInfo"] ?? .null)
            )
        case "user_info":
            guard let userID = frame["userId"]?.stringValue else { return .other(type: type) }
            return .userInfo(UserInfo(userId: userID, isAdmin: frame["isAdmin"]?.boolValue == true))
        case "ack":
            guard let id = frame["id"]?.stringValue else { return .other(type: type) }
            return .ack(Ack(id: id))
        case "message":
            return message(frame).map(ServerFrame.message) ?? .other(type: type)
        case "error":
            let code = frame["code"]?.stringValue ?? ClawlineErrorCode.serverError.rawValue
            return .error(ErrorFrame(code: code, message: frame["message"]?.stringValue ?? code, messageId: frame["messageId"]?.stringValue))
        case "typing":
            guard frame["role"]?.stringValue != "user", let active = frame["active"]?.boolValue else { return .other(type: type) }
            return .typing(Typing(active: active, channelType: frame["channelType"]?.stringValue.flatMap(ClawlineChannel.init(rawValue:))))
        default:
            return .other(type: type)
        }
    }

    private static func message(_ frame: JSONValue) -> Message? {
        guard let id = frame["id"]?.stringValue, !id.isEmpty else { return nil }
        return Message(
            id: id,
            role: frame["role"]?.stringValue ?? "",
            content: frame["content"]?.stringValue ?? "",
            timestamp: frame["timestamp"]?.intValue ?? 0,
            streaming: frame["streaming"]?.boolValue == true,
            deviceId: frame["deviceId"]?.stringValue,
            attachments: frame["attachments"]?.arrayValue,
            channelType: frame["channelType"]?.stringValue.flatMap(ClawlineChannel.init(rawValue:))
        )
    }
}
