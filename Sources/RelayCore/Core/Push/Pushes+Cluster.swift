extension Pushes {
    /// Runs `send` unless the device is in the foreground on another node of the cluster (it
    /// sees the answer there, as a device in the foreground here does); the push is dropped then.
    /// On a relay on its own, or when the read fails (better a push too many than none), `send`
    /// runs at once.
    func unlessPresentElsewhere(_ push: PendingPush, send: @escaping () -> Void) {
        guard let nodePresence else { return send() }
        nodePresence.clusterPresence(deviceID: push.deviceID) { [self] result in
            guard case .success(.foreground) = result else { return send() }
            journal.deletePush(id: push.id)
            cancelledCount += 1
            logger.debug(
                "push cancelled",
                metadata: ["device": "\(push.deviceID)", "conversation": "\(push.conversationID)", "why": "in the foreground on another node"]
            )
        }
    }
}
