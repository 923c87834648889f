import ClawlineWire
import RelayCore

extension ClawlineDownstream {
    /// A bus event for one socket, in protocol form.
    func deliver(_ event: BusEvent, to socket: ClawlineSocket) {
        switch socket.machine.deliver(event) {
        case .write: write(event, to: socket)
        case .fail(let error): perform(.fail(error), on: socket)
        case .hold, .drop: break
        }
    }

    func write(_ event: BusEvent, to socket: ClawlineSocket) {
        if case .message = event, let delivery = hub.stages.finalWrite() {
            socket.connection.send(utf8: encoded(event)) { delivery.written() }
        } else {
            socket.connection.send(utf8: encoded(event))
        }
        // The app shows what it receives while connected: the user has read it.
        if case .message(let chatEvent) = event, chatEvent.userID == socket.machine.userID {
            hub.shown(deviceID: socket.deviceID, conversationID: chatEvent.conversationID, seq: chatEvent.seq)
        }
    }

    /// The wire bytes of a bus event, encoded once per event however many devices receive it.
    private func encoded(_ event: BusEvent) -> [UInt8] {
        if let cached = lastEncoded, cached.event == event { return cached.bytes }
        let bytes: [UInt8]
        switch event {
        case .message(let chatEvent): bytes = FastFrames.message(chatEvent)
        case .streaming(let progress):
            bytes = FastFrames.streaming(
                id: progress.eventID,
                content: progress.content,
                timestamp: progress.startedAt,
                channel: channel(of: progress.conversationID)
            )
        case .assistantTyping(let conversationID, let active): bytes = FastFrames.typing(active, channel: channel(of: conversationID))
        case .turnFailed, .tool, .status, .approval: bytes = []
        }
        lastEncoded = (event, bytes)
        return bytes
    }
}
