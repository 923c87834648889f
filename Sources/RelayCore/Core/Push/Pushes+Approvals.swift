extension Pushes {
    /// An approval was asked: each away device of the user is asked by push after the delay (and
    /// quiet hours), unless it is resolved first. Resolved after its push went out, APNs targets
    /// get a silent push that lets the app clear it. Approval pushes are not stored: approvals do
    /// not outlive the relay.
    func approvalChanged(_ update: ApprovalUpdate) {
        guard isEnabled else { return }
        switch update {
        case .requested(let approval):
            let now = clock.nowMillis()
            for deviceID in (devicesByUser[approval.userID] ?? []).sorted() where !takesLive(deviceID, approval.conversationID) {
                let push = Self.approvalPush(approval, deviceID: deviceID, kind: .approvalRequested, now: now, dueAt: due(now + settings.delayMillis))
                guard push.dueAt < approval.expiresAt else { continue }
                let key = Key(deviceID: deviceID, conversationID: approval.id)
                let wait = Int(max(0, min(push.dueAt - now, Int64(Int32.max))))
                approvalTimers[key] = loop.schedule(afterMillis: wait) { [weak self] in self?.fireApproval(push, key: key) }
            }
        case .resolved(let approval, _):
            for key in approvalTimers.keys where key.conversationID == approval.id {
                if let timer = approvalTimers.removeValue(forKey: key) { loop.cancel(timer) }
                cancelledCount += 1
            }
            guard let dispatcher, let pushed = approvalsPushed.removeValue(forKey: approval.id) else { return }
            let now = clock.nowMillis()
            for deviceID in pushed.sorted() {
                guard var device = devices[deviceID] else { continue }
                device.targets.removeAll { $0.kind != .apns }
                guard !device.targets.isEmpty else { continue }
                let push = Self.approvalPush(approval, deviceID: deviceID, kind: .approvalResolved, now: now, dueAt: now)
                send(push, to: device, conversation: conversations.cached(id: approval.conversationID), backend: approval.backend, via: dispatcher)
            }
        }
    }

    private func fireApproval(_ push: PendingPush, key: Key) {
        guard approvalTimers.removeValue(forKey: key) != nil, let approval = push.approval else { return }
        guard let device = devices[push.deviceID], let dispatcher, !takesLive(push.deviceID, approval.conversationID) else { return }
        approvalsPushed[approval.id, default: []].insert(push.deviceID)
        conversations.load(id: approval.conversationID) { [self] result in
            let conversation = (try? result.get()) ?? nil
            send(push, to: device, conversation: conversation, backend: approval.backend, via: dispatcher)
        }
    }

    /// The push that asks (or clears) `approval` on a device.
    public static func approvalPush(_ approval: Approval, deviceID: String, kind: PendingPush.Kind, now: Int64, dueAt: Int64) -> PendingPush {
        let verb = approval.toolName == "Bash" ? "run" : "use"
        let what = approval.summary.isEmpty ? approval.toolName : "\(approval.toolName): \(approval.summary)"
        var push = PendingPush(
            id: Identifiers.newUUID(),
            deviceID: deviceID,
            userID: approval.userID,
            conversationID: approval.conversationID,
            count: 1,
            lastSeq: 0,
            failed: false,
            text: String("\(approval.agent) wants to \(verb) \(what)".prefix(PendingPush.textLimit)),
            runMillis: 0,
            createdAt: now,
            dueAt: dueAt
        )
        push.kind = kind
        push.approval = approval
        return push
    }

    /// The neutral form of an approval push: "Approval needed" and what waits, or a silent
    /// resolved push; nil for answers.
    public static func approvalContent(_ notice: PushNotice) -> PushContent? {
        let push = notice.push
        guard let approval = push.approval else { return nil }
        let fields: [String: JSONValue] = [
            "approvalId": .string(approval.id), "conversationId": .string(approval.conversationID), "kind": .string(push.eventName),
        ]
        switch push.kind {
        case .answer: return nil
        case .approvalRequested:
            return PushContent(
                title: "Approval needed",
                body: String(push.text.prefix(200)),
                threadID: push.conversationID,
                custom: ["clawrelay": .object(fields)]
            )
        case .approvalResolved:
            return PushContent(title: "", body: "", threadID: push.conversationID, custom: ["clawrelay": .object(fields)], silent: true)
        }
    }
}
