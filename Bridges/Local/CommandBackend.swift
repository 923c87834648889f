import Foundation
import Logging
import RelayCore

/// A built-in backend that runs a program per turn: the user's text on stdin, the answer on stdout.
///
/// Each turn gets its own thread, child process and process group. The child sees the relay's
/// environment plus `environment`, plus `CLAWRELAY_USER_ID`, `CLAWRELAY_DEVICE_ID`,
/// `CLAWRELAY_CONVERSATION_ID` and, for a conversation with a working directory,
/// `CLAWRELAY_WORKING_DIRECTORY`; it runs in that directory when the directory exists. When the
/// message has attachments, `CLAWRELAY_ATTACHMENTS` names a private directory holding them
/// (`1-photo.png`, `2-…`, in order), removed when the turn ends. A turn
/// fails after `timeoutSeconds` without output (stdout or stderr) and after `maxSeconds` in all;
/// the first 4 KiB of stderr go to the relay log at debug.
///
/// - Important: Events arrive on the turn's thread. After `cancel()` returns at most the event
///   already being delivered can still arrive.
public final class CommandBackend: Backend {
    public let name: String
    private let command: [String]
    private let timeout: Duration
    private let maxDuration: Duration?
    private let environment: [String: String]
    private let logger: Logger?

    public init(
        name: String,
        command: [String],
        timeoutSeconds: Int,
        maxSeconds: Int? = nil,
        environment: [String: String] = [:],
        logger: Logger? = nil
    ) {
        self.name = name
        self.command = command
        self.timeout = .seconds(timeoutSeconds)
        self.maxDuration = maxSeconds.map { .seconds($0) }
        self.environment = ProcessInfo.processInfo.environment.merging(environment) { _, configured in configured }
        self.logger = logger
    }

    public func start(_ turn: TurnRequest, events: @escaping @Sendable (TurnEvent) -> Void) -> TurnHandle {
        var environment = environment
        environment["CLAWRELAY_USER_ID"] = turn.userID
        environment["CLAWRELAY_DEVICE_ID"] = turn.deviceID
        environment["CLAWRELAY_CONVERSATION_ID"] = turn.conversationID
        var directory: String?
        if let place = turn.workingDirectory {
            environment["CLAWRELAY_WORKING_DIRECTORY"] = place
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: place, isDirectory: &isDirectory), isDirectory.boolValue { directory = place }
        }
        let attachments = TurnFiles(turn.attachments, runID: turn.runID)
        if let attachments { environment["CLAWRELAY_ATTACHMENTS"] = attachments.directory }
        let runner = ChildTurn(
            arguments: command,
            environment: environment.map { "\($0.key)=\($0.value)" },
            directory: directory,
            input: turn.text,
            timeout: timeout,
            maxDuration: maxDuration,
            reader: CommandOutput(),
            stderrLine: { [logger, name] text in logger?.debug("command backend stderr", metadata: ["backend": "\(name)", "stderr": "\(text)"]) },
            events: events
        )
        let thread = Thread { [logger, name] in
            // Written on the turn's thread (uploads may be large), removed when it ends.
            if let attachments, let error = attachments.write() {
                logger?.warning("attachments not written", metadata: ["backend": "\(name)", "error": "\(error)"])
            }
            runner.run()
            attachments?.remove()
        }
        thread.name = "clawrelay.command.\(name)"
        thread.start()
        return TurnHandle { runner.cancel() }
    }
}
