/// A client frame whose `data` passed its type's reader: every request a Companion server takes.
public enum CompanionClientFrame: Sendable, Equatable {
    case ping(Ping)
    case subscribe(Subscribe)
    case claudeCommand(ClaudeCommand)
    case ask(Ask)
    case streamStart(StreamStart)
    case streamSend(StreamSend)
    case streamClose(StreamClose)
    case setWorkingDirectory(SetWorkingDirectory)
    case registerDevice(RegisterDevice)
    case presence(SessionPresence)
    /// An answer to a permission prompt (`permissionRequest`).
    case permission(PermissionAnswer)

    /// The typed request; an unknown type is `UNKNOWN_MESSAGE_TYPE`, bad fields `INVALID_MESSAGE`
    /// (or `PAYLOAD_TOO_LARGE`). Pure.
    public static func decode(_ request: CompanionRequest) -> Result<CompanionClientFrame, CompanionError> {
        let data = request.data
        do throws(CompanionError) {
            switch request.type {
            case Ping.type: return .success(.ping(Ping(data)))
            case Subscribe.type: return .success(.subscribe(try Subscribe(data)))
            case ClaudeCommand.type: return .success(.claudeCommand(try ClaudeCommand(data)))
            case Ask.type: return .success(.ask(try Ask(data)))
            case StreamStart.type: return .success(.streamStart(try StreamStart(data)))
            case StreamSend.type: return .success(.streamSend(try StreamSend(data)))
            case StreamClose.type: return .success(.streamClose(try StreamClose(data)))
            case SetWorkingDirectory.type: return .success(.setWorkingDirectory(try SetWorkingDirectory(data)))
            case RegisterDevice.type: return .success(.registerDevice(try RegisterDevice(data)))
            case "client_backgrounding", "sessionBackgrounded": return .success(.presence(try SessionPresence(backgrounded: true, data)))
            case "sessionForegrounded": return .success(.presence(try SessionPresence(backgrounded: false, data)))
            case PermissionAnswer.type: return .success(.permission(try PermissionAnswer(data)))
            default: return .failure(.unknownType(request.type))
            }
        } catch {
            return .failure(error)
        }
    }

    /// The frames whose arrival does not mean the app is in use (any other frame means it is).
    public static func isBackgroundSignal(_ type: String) -> Bool { type == "client_backgrounding" || type == "sessionBackgrounded" }
}
