import Foundation
import RelayCore

/// How Claude Code's tool calls read for people: one line per call, inputs and results bounded.
enum ClaudeToolText {
    /// Input keys whose value reads as one line about the call, best first.
    static let labelKeys = ["command", "file_path", "notebook_path", "path", "pattern", "url", "query", "description", "prompt"]
    /// Longest string kept per field when an input is too large to show whole.
    static let shortenedField = 256
    /// Longest approval summary, in characters (a long command is cut, ending with "…").
    static let summaryLimit = 500

    /// One line for people: the command, the file, the pattern, ...
    static func label(of input: JSONValue) -> String? {
        for key in labelKeys {
            guard let value = input[key]?.stringValue else { continue }
            let line = value.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            if !line.isEmpty { return String(line.prefix(200)) }
        }
        return nil
    }

    /// What a person decides on when a tool asks to run: the whole command (its lines joined, so
    /// nothing hides on a second line), else the file, URL, pattern, …, else the tool's own words.
    static func summary(tool: String, input: JSONValue, description: String?) -> String {
        let whole = labelKeys.lazy.compactMap { input[$0]?.stringValue }.first { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
        let text = whole ?? description ?? tool
        let line = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(
            separator: " ⏎ "
        )
        return line.count > summaryLimit ? String(line.prefix(summaryLimit - 1)) + "…" : line
    }

    /// The input object's JSON; when too large, with long strings cut, else `{}`.
    static func inputJSON(_ input: JSONValue) -> String {
        guard case .object = input else { return "{}" }
        let whole = input.encoded()
        if whole.utf8.count <= ToolActivity.inputLimit { return whole }
        let shortened = bounded(input).encoded()
        return shortened.utf8.count <= ToolActivity.inputLimit ? shortened : "{}"
    }

    /// The input as given when it is small enough to keep, else with long strings cut, else `{}`.
    static func bounded(_ input: JSONValue) -> JSONValue {
        guard case .object(let fields) = input else { return .object([:]) }
        if input.encoded().utf8.count <= ToolActivity.inputLimit { return input }
        let shortened = JSONValue.object(fields.mapValues(shorten))
        return shortened.encoded().utf8.count <= ToolActivity.inputLimit ? shortened : .object([:])
    }

    /// A `tool_result` block's content as text: a string, or its text parts joined.
    static func resultText(_ content: JSONValue?) -> String? {
        switch content {
        case .string(let text): return text
        case .array(let parts):
            let texts = parts.compactMap { $0["type"]?.stringValue == "text" ? $0["text"]?.stringValue : nil }
            return texts.isEmpty ? nil : texts.joined(separator: "\n")
        default: return nil
        }
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

extension JSONValue {
    /// A number as a `Double`, whether JSON wrote it as an integer or not.
    var numberValue: Double? {
        switch self {
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }

    /// An integer, also one JSON wrote as a whole double.
    var integerValue: Int? {
        switch self {
        case .int(let value): Int(exactly: value)
        case .double(let value) where value.rounded() == value && abs(value) < 1e15: Int(value)
        default: nil
        }
    }
}
