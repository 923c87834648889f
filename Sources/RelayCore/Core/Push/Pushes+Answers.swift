extension Pushes {
    /// Sends `content` to the device's targets now, whatever the delay, quiet hours or presence:
    /// for apps whose only way to get an answer is its push (the newest Companion app). Nothing is
    /// stored; `completion` says whether a service took it. A device whose targets are not
    /// loaded yet (registered a moment ago) is read first.
    public func sendAnswer(
        deviceID: String,
        conversationID: String,
        text: String,
        failed: Bool,
        content: PushContent,
        completion: @escaping (Bool) -> Void = { _ in }
    ) {
        guard let dispatcher else { return completion(false) }
        let go = { [self] (device: PushDevice) in
            let now = clock.nowMillis()
            let push = PendingPush(
                id: Identifiers.newUUID(),
                deviceID: deviceID,
                userID: device.userID,
                conversationID: conversationID,
                count: 1,
                lastSeq: 0,
                failed: failed,
                text: String(text.prefix(PendingPush.textLimit)),
                runMillis: 0,
                createdAt: now,
                dueAt: now
            )
            dispatcher.dispatch(PushDelivery(push: push, device: device, content: content)) { [weak self] report in
                self?.delivered(push, report)
                completion(report.attempts.contains { $0.outcome == .sent })
            }
        }
        if let device = devices[deviceID] { return go(device) }
        journal.pushDevice(deviceID) { [self] result in
            guard case .success(let device?) = result else {
                logger.warning("answer push not sent: the device has no push target", metadata: ["device": "\(deviceID)"])
                return completion(false)
            }
            go(device)
        }
    }
}
