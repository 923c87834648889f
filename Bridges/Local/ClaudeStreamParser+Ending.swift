import Foundation
import RelayCore
import RelayProcess

extension ClaudeStreamParser {
    /// The events that end the turn once Claude Code is gone: the answer when its `result` says
    /// success, else a failure that says why (the result's subtype, the exit, unreadable lines, the
    /// end of stderr). A `--resume` Claude Code refused before it started forgets that session,
    /// so the conversation's next turn starts a new one instead of failing the same way.
    func ending(_ termination: ChildProcess.Termination, stderr: String) -> [TurnEvent] {
        if let completion {
            guard completion.success else {
                let detail = completion.text.isEmpty ? "" : ": \(completion.text.prefix(300))"
                return [.failed("Claude Code reported \(completion.subtype.isEmpty ? "an error" : completion.subtype)\(detail)")]
            }
            return [.final(answer(with: completion.text))]
        }
        var reason: String
        switch termination {
        case .exited(0): reason = "Claude Code ended without a result"
        case .exited(let status): reason = "Claude Code exited with status \(status) without a result"
        case .signaled(let signal): reason = "Claude Code was killed by signal \(signal) without a result"
        }
        if let firstUnreadable {
            reason += "; \(unreadable) unreadable line\(unreadable == 1 ? "" : "s") of output, the first: \(firstUnreadable)"
        }
        if !stderr.isEmpty { reason += "; stderr: \(stderr)" }
        if let resumed, sessionID == nil, stderr.contains(resumed) {
            return [.backendSession(nil), .failed("could not resume Claude Code session \(resumed), the next message starts a new one (\(reason))")]
        }
        return [.failed(reason)]
    }

    /// The stored answer: the text people saw stream, ending with the result's text (which is
    /// normally its last block already).
    func answer(with result: String) -> String {
        let tail = result.trimmingCharacters(in: .whitespacesAndNewlines)
        let shown = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if shown.isEmpty { return result }
        if tail.isEmpty || shown.hasSuffix(tail) { return text }
        return text + "\n\n" + result
    }

    /// Input keys whose value reads as one line about the call, best first.
    static let labelKeys = ["command", "file_path", "notebook_path", "path", "pattern", "url", "query", "description", "prompt"]
    /// Longest string kept per field when an input is too large to show whole.
    static let shortenedField = 256

    /// One line for people: the command, the file, the pattern, ...
    static func label(of input: JSONValue) -> String? {
        for key in labelKeys {
            guard let value = input[key]?.stringValue else { continue }
            let line = value.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            if !line.isEmpty { return String(line.prefix(200)) }
        }
        return nil
    }

    /// The input object's JSON; when too large, with long strings cut, else `{}`.
    static func inputJSON(_ input: JSONValue) -> String {
        guard case .object(let fields) = input else { return "{}" }
        let whole = input.encoded()
        if whole.utf8.count <= ToolActivity.inputLimit { return whole }
        let shortened = JSONValue.object(fields.mapValues(shorten)).encoded()
        return shortened.utf8.count <= ToolActivity.inputLimit ? shortened : "{}"
    }

    private static func shorten(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let text) where text.count > shortenedField: .string(text.prefix(shortenedField) + "…")
        case .array(let items): .array(items.prefix(20).map(shorten))
        case .object(let fields): .object(fields.mapValues(shorten))
        default: value
        }
    }
}
