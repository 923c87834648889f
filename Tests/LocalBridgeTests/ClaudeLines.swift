/// Lines in the shapes Claude Code 2.1.332 prints with `-p --input-format stream-json
/// --output-format stream-json --verbose --include-partial-messages --permission-prompt-tool
/// stdio` (recorded against the real CLI, fields the relay does not read left out).
enum ClaudeLines {
    static let session = "5b1c1eeb-3350-469b-8367-fb464064839b"

    static func lifecycle(_ uuid: String, _ state: String) -> String {
        #"{"type":"command_lifecycle","command_uuid":"\#(uuid)","state":"\#(state)","uuid":"e1","session_id":"\#(session)"}"#
    }

    static func initLine(session: String = session) -> String {
        #"{"type":"system","subtype":"init","cwd":"/srv/app","session_id":"\#(session)","tools":["Bash","Read"],"mcp_servers":[],"model":"claude-opus-5-5","permissionMode":"default","slash_commands":["compact","context"],"apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.332"}"#
    }

    static let requesting = #"{"type":"system","subtype":"status","status":"requesting","session_id":"\#(session)"}"#

    static func blockStart(_ index: Int, type: String = "text") -> String {
        let block = type == "text" ? #"{"type":"text","text":""}"# : #"{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}"#
        return
            #"{"type":"stream_event","event":{"type":"content_block_start","index":\#(index),"content_block":\#(block)},"session_id":"\#(session)","parent_tool_use_id":null}"#
    }

    static func delta(_ text: String, parent: String? = nil) -> String {
        let parentID = parent.map { "\"\($0)\"" } ?? "null"
        return
            #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\#(text)"}},"session_id":"\#(session)","parent_tool_use_id":\#(parentID)}"#
    }

    static func blockStop(_ index: Int) -> String {
        #"{"type":"stream_event","event":{"type":"content_block_stop","index":\#(index)},"session_id":"\#(session)","parent_tool_use_id":null}"#
    }

    static func text(_ text: String, model: String = "claude-fake-1", parent: String? = nil) -> String {
        let parentID = parent.map { "\"\($0)\"" } ?? "null"
        return
            #"{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"\#(model)","content":[{"type":"text","text":"\#(text)"}],"stop_reason":null},"parent_tool_use_id":\#(parentID),"session_id":"\#(session)"}"#
    }

    static func toolUse(_ id: String = "toolu_1", command: String = "touch ran1 && echo ok1", parent: String? = nil) -> String {
        let parentID = parent.map { "\"\($0)\"" } ?? "null"
        return
            #"{"type":"assistant","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-fake-1","content":[{"type":"tool_use","id":"\#(id)","name":"Bash","input":{"command":"\#(command)","description":"touch"}}]},"parent_tool_use_id":\#(parentID),"session_id":"\#(session)"}"#
    }

    static func toolResult(_ id: String = "toolu_1", content: String = "ok1", isError: Bool = false) -> String {
        #"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"\#(id)","type":"tool_result","content":"\#(content)","is_error":\#(isError)}]},"parent_tool_use_id":null,"session_id":"\#(session)","tool_use_result":{"stdout":"\#(content)","stderr":"","interrupted":false}}"#
    }

    static func canUseTool(_ requestID: String = "e980cfc6-4413-4829-b209-5a7f8864af55", command: String = "touch ran1 && echo ok1") -> String {
        #"{"type":"control_request","request_id":"\#(requestID)","request":{"subtype":"can_use_tool","tool_name":"Bash","display_name":"Bash","input":{"command":"\#(command)","description":"touch"},"description":"touch","permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch ran1 *"}],"behavior":"allow","destination":"localSettings"},{"type":"addDirectories","directories":["/srv/app"],"destination":"session"},{"type":"setMode","mode":"acceptEdits","destination":"session"}],"blocked_path":"/srv/app/ran1","tool_use_id":"toolu_1"}}"#
    }

    static func cancelRequest(_ requestID: String = "e980cfc6-4413-4829-b209-5a7f8864af55") -> String {
        #"{"type":"control_cancel_request","request_id":"\#(requestID)"}"#
    }

    static let interruptAnswer =
        #"{"type":"control_response","response":{"subtype":"success","request_id":"relay-interrupt-1","response":{"still_queued":[]}}}"#

    static func apiRetry(attempt: Int, status: Int?, error: String = "overloaded") -> String {
        let code = status.map(String.init) ?? "null"
        return
            #"{"type":"system","subtype":"api_retry","attempt":\#(attempt),"max_retries":10,"retry_delay_ms":506,"error_status":\#(code),"error":"\#(error)","session_id":"\#(session)"}"#
    }

    static func result(
        _ text: String,
        session: String = session,
        total: Double = 0.000188,
        turnCost: Double? = 0.000188,
        index: Int = 0
    ) -> String {
        let since =
            turnCost.map { #""model_usage_since_last_result":{"claude-opus-5-5":{"inputTokens":12,"outputTokens":7,"costUSD":\#($0)}},"# } ?? ""
        return
            #"{"type":"result","subtype":"success","is_error":false,"duration_ms":276,"duration_api_ms":145,"num_turns":1,"result":"\#(text)","stop_reason":"end_turn","session_id":"\#(session)","total_cost_usd":\#(total),"usage":{"input_tokens":12,"cache_creation_input_tokens":3,"cache_read_input_tokens":40,"output_tokens":7},\#(since)"permission_denials":[],"terminal_reason":"completed","result_index":\#(index),"api_error_status":null,"errors":null}"#
    }

    /// An API error after the retries: a success subtype that is an error.
    static let apiErrorText = "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment."
    static let syntheticError = text(apiErrorText, model: "<synthetic>")
    static let apiErrorResult =
        #"{"type":"result","subtype":"success","is_error":true,"duration_ms":600,"num_turns":1,"result":"\#(apiErrorText)","stop_reason":"stop_sequence","session_id":"\#(session)","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0},"permission_denials":[],"terminal_reason":"api_error","result_index":0,"api_error_status":529,"errors":null}"#

    /// An interrupted turn's result.
    static let interruptedResult =
        #"{"type":"result","subtype":"error_during_execution","is_error":true,"duration_ms":80,"num_turns":2,"result":null,"session_id":"\#(session)","total_cost_usd":0.000188,"usage":{"input_tokens":12,"output_tokens":7},"permission_denials":[],"terminal_reason":"aborted_tools","result_index":0,"errors":["[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use"]}"#

    /// What `--resume <id>` of a session Claude Code does not have prints (then it exits 1).
    static func resumeRefused(_ id: String) -> String {
        #"{"type":"result","subtype":"error_during_execution","duration_ms":0,"is_error":true,"num_turns":0,"stop_reason":null,"session_id":"\#(id)","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0},"modelUsage":{},"permission_denials":[],"errors":["No conversation found with session ID: \#(id)"],"result_index":0}"#
    }

    /// A slash command's answer (`/context`): Claude Code's own text, and a successful result.
    static let slashOutput = text("## Context Usage", model: "<synthetic>")
    static let slashResult =
        ###"{"type":"result","subtype":"success","is_error":false,"duration_ms":2,"num_turns":0,"result":"## Context Usage","session_id":"\###(session)","total_cost_usd":0.000188,"usage":{"input_tokens":0,"output_tokens":0},"permission_denials":[],"result_index":1}"###
}
