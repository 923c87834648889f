import PostgresNIO
import RelayCore

/// The log's rows read back as the core's stream entries: message events (with `turn` set from
/// their message record, for a user's message and its answer) and failed turns. The cluster's
/// catch-up reads (`PostgresClusterJournal`) and the notification queues (which point at the log)
/// both read them this way.
enum PostgresLogEntries {
    /// What an entry read selects, from `events e LEFT JOIN messages m ON m.run_id = e.run_id`,
    /// in `Row`'s order.
    static let columns = """
        e.seq, e.id, e.kind, e.conversation_id, e.role, e.content, e.device_id, e.attachments, e.run_id, e.created_ms, m.device_id,
          m.client_id, m.state, m.answer_event_id
        """

    typealias Row = (Int64, String, Int16, String, Int16?, String?, String?, String?, String?, Int64, String?, String?, Int16?, String?)

    static func entry(_ row: Row, stream: String) -> StreamEntry {
        let (seq, id, kind, conversation, role, content, device, attachments, run, createdAt, messageDevice, client, state, answerID) = row
        let turn = run.flatMap { run in messageDevice.flatMap { device in client.map { TurnRef(runID: run, deviceID: device, clientID: $0) } } }
        if kind == 1, let turn {
            let failure = TurnFailure(
                turn: turn,
                conversationID: conversation,
                userID: stream,
                cause: state == Int16(MessageState.aborted.rawValue) ? .aborted : .failed,
                reason: content ?? "",
                timestampMillis: createdAt,
                answerID: answerID
            )
            return .failure(failure, seq: seq)
        }
        var event = PostgresEventQueries.event((id, seq, stream, conversation, role, content, createdAt, device, attachments))
        event.turn = turn
        return .message(event)
    }
}
