extension Turns {
    /// Makes the lane's first queued turn the active one and starts it.
    func startFirst(of lane: Lane, _ conversationID: String) {
        let turn = lane.queue.removeFirst()
        lane.active = turn
        turn.startedAt = clock.nowMillis()
        bus.publish(.assistantTyping(conversationID: conversationID, active: true), to: turn.userID)
        // The conversation itself, not whatever the cache holds: its backend, working directory
        // and backend session decide where the turn runs (inline when it is cached).
        conversations.load(id: conversationID) { [self] result in
            guard isActive(turn), !turn.isFinishing else { return }
            switch result {
            case .success(let conversation): start(turn, in: conversation)
            case .failure(let error): end(turn, .failed, reason: "the conversation could not be read: \(error)")
            }
        }
    }

    /// Runs the active `turn` in `conversation` (nil: it is gone; the policy's backend answers).
    private func start(_ turn: Turn, in conversation: Conversation?) {
        let conversationID = turn.conversationID
        let backendName = router.backendName(for: conversation, policy: turn.policy)
        let command = RelayCommand(turn.text)
        if let command, command != .compact || router.backends[backendName]?.canCompact != true { return run(command, turn, in: conversation) }
        guard let backend = router.backends[backendName] else { return end(turn, .failed, reason: "no backend named \(backendName)") }
        if handsOver(turn, backend: backendName) { return }
        if command == .compact {
            whenEnded(runID: turn.ref.runID) { [conversations] end in
                if case .answered = end { conversations.compacted(turn.conversationID, userID: turn.userID, done: true) }
            }
        }
        turn.backendName = backend.name
        turn.backend = backend
        armInactivityTimer(turn)
        turn.stamps.started = MonotonicClock.nanos()
        stages.record(.committedToTurnStarted, from: turn.stamps.committed, to: turn.stamps.started)
        var request = TurnRequest(
            userID: turn.userID,
            deviceID: turn.ref.deviceID,
            conversationID: conversationID,
            text: turn.readOnly && !backend.honoursReadOnly ? TurnRequest.readOnlyInstruction + turn.text : turn.text,
            runID: turn.ref.runID,
            workingDirectory: conversation?.workingDirectory,
            backendSession: conversation?.backendSession,
            settings: conversation?.settings ?? ConversationSettings()
        )
        request.readOnly = turn.readOnly
        attachments(of: turn) { [self] attachments in
            guard isActive(turn), !turn.isFinishing else { return }
            request.attachments = attachments
            let bound = LoopBound((self, turn), loop: loop)
            let loop = self.loop
            turn.handle = backend.start(request) { event in
                loop.execute {
                    let (turns, turn) = bound.value
                    turns.handle(event, of: turn)
                }
            }
        }
    }

    /// The turn's attachments for its backend, uploaded assets looked up (inline, when there are
    /// none). An asset whose record is gone by now is left out.
    private func attachments(of turn: Turn, completion: @escaping ([TurnAttachment]) -> Void) {
        var pending = TurnAttachment.parse(turn.attachmentsJSON)[...]
        var found: [TurnAttachment] = []
        func next() {
            while case .ready(let attachment)? = pending.first {
                found.append(attachment)
                pending.removeFirst()
            }
            guard case .asset(let id, let fileName)? = pending.popFirst() else { return completion(found) }
            assets.find(id) { result in
                if case .success(let asset?) = result {
                    found.append(TurnAttachment(mimeType: asset.mimeType, fileName: fileName, path: asset.path))
                }
                next()
            }
        }
        next()
    }

    /// The backend said something: the turn is alive for another `inactivityMillis`. The timer is
    /// armed once; when it fires it looks at the last output and waits out the rest, so events
    /// (a streaming answer's every progress) cost a clock read, not a timer cancelled and re-armed.
    private func armInactivityTimer(_ turn: Turn) {
        turn.lastOutputMillis = clock.nowMillis()
        if turn.inactivityTimer == nil { checkInactivity(turn, afterMillis: turn.policy.inactivityMillis) }
    }

    private func checkInactivity(_ turn: Turn, afterMillis delay: Int) {
        turn.inactivityTimer = loop.schedule(afterMillis: delay) { [weak self, weak turn] in
            guard let self, let turn, isActive(turn), !turn.isFinishing else { return }
            turn.inactivityTimer = nil
            let limit = turn.policy.inactivityMillis
            // Waiting for the user's answer is not the backend's silence.
            if approvals.isWaiting(runID: turn.ref.runID) { turn.lastOutputMillis = clock.nowMillis() }
            let idle = clock.nowMillis() - turn.lastOutputMillis
            if idle >= Int64(limit) { return end(turn, .failed, reason: "no output for \(limit / 1000) s") }
            checkInactivity(turn, afterMillis: limit - Int(idle))
        }
    }

    private func isActive(_ turn: Turn) -> Bool { lanes[turn.conversationID]?.active === turn }

    func handle(_ event: TurnEvent, of turn: Turn) {
        guard isActive(turn), !turn.isFinishing else { return }
        switch event {
        case .typing:
            // The runner itself says typing on when a turn starts and off once it ended.
            break
        case .progress(let text):
            if turn.stamps.firstProgress == 0 {
                turn.stamps.firstProgress = MonotonicClock.nanos()
                stages.record(.turnStartedToFirstProgress, from: turn.stamps.started, to: turn.stamps.firstProgress)
            }
            turn.content = text
            armInactivityTimer(turn)
            bus.publish(.streaming(turn.progress), to: turn.userID)
        case .toolStarted(let activity):
            publishTool(.started, activity, of: turn)
        case .toolEnded(let activity):
            publishTool(.ended, activity, of: turn)
        case .backendSession(let session):
            armInactivityTimer(turn)
            conversations.setBackendSession(session, of: turn.conversationID)
        case .approval(let ask):
            armInactivityTimer(turn)
            self.ask(ask, of: turn)
        case .approvalWithdrawn(let requestID):
            armInactivityTimer(turn)
            approvals.withdraw(requestID: requestID, runID: turn.ref.runID)
        case .report(let report):
            armInactivityTimer(turn)
            counters.reported(report, backend: turn.backendName)
            usage.saveTurnReport(
                TurnReportRecord(
                    runID: turn.ref.runID,
                    userID: turn.userID,
                    conversationID: turn.conversationID,
                    backend: turn.backendName,
                    report: report,
                    at: clock.nowMillis()
                )
            )
        case .status(let text):
            armInactivityTimer(turn)
            let status = TurnStatus(turn: turn.ref, eventID: turn.eventID, conversationID: turn.conversationID, text: String(text.prefix(500)))
            bus.publish(.status(status), to: turn.userID)
        case .final(let text):
            finish(turn, text: text)
        case .failed(let reason):
            end(turn, .failed, reason: reason)
        }
    }

    /// Asks the user on the backend's behalf; the answer goes back through the turn's handle.
    private func ask(_ ask: ApprovalAsk, of turn: Turn) {
        approvals.open(ask, userID: turn.userID, conversationID: turn.conversationID, runID: turn.ref.runID, backend: turn.backendName) {
            [weak self, weak turn] answer in
            guard let self, let turn else { return }
            turn.handle?.answer(ask.requestID, answer)
            if isActive(turn), !turn.isFinishing { armInactivityTimer(turn) }
        }
    }

    private func publishTool(_ phase: ToolProgress.Phase, _ activity: ToolActivity, of turn: Turn) {
        armInactivityTimer(turn)
        let tool = ToolProgress(turn: turn.ref, eventID: turn.eventID, conversationID: turn.conversationID, phase: phase, activity: activity)
        bus.publish(.tool(tool), to: turn.userID)
    }

    func finish(_ turn: Turn, text: String) {
        turn.isFinishing = true
        if let timer = turn.inactivityTimer { loop.cancel(timer) }
        approvals.cancel(runID: turn.ref.runID)
        let targets = queue.targets(userID: turn.userID, conversationID: turn.conversationID)
        turn.stamps.finalSubmitted = MonotonicClock.nanos()
        stages.record(.firstProgressToFinal, from: turn.stamps.firstProgress, to: turn.stamps.finalSubmitted)
        journal.finish(
            turn.ref,
            userID: turn.userID,
            conversationID: turn.conversationID,
            eventID: turn.eventID,
            content: text,
            now: clock.nowMillis(),
            queue: targets
        ) { [self] result in
            let committedAt = MonotonicClock.nanos()
            guard turn.isAside || isActive(turn) else { return }
            switch result {
            case .success(var event):
                stages.recordStore(submitted: turn.stamps.finalSubmitted, completed: committedAt, batch: journal.batchTiming, final: true)
                event.turn = turn.ref
                completedCount += 1
                if !turn.isAside {
                    lanes[turn.conversationID]?.active = nil
                    released(turn)
                }
                stages.publishingFinal(received: turn.stamps.received, committed: committedAt) {
                    queue.publish(.message(event), userID: turn.userID, queuedFor: targets, runMillis: clock.nowMillis() - turn.startedAt)
                }
                if turn.isAside { return ended(turn.ref.runID, .answered(event)) }
                bus.publish(.assistantTyping(conversationID: turn.conversationID, active: false), to: turn.userID)
                ended(turn.ref.runID, .answered(event))
                runNext(turn.conversationID)
            case .failure(let error) where turn.isAside:
                logger.error("a relay command's reply could not be stored", metadata: ["run": "\(turn.ref.runID)", "error": "\(error)"])
                record(
                    TurnFailure(
                        turn: turn.ref,
                        conversationID: turn.conversationID,
                        userID: turn.userID,
                        cause: .failed,
                        reason: "the reply could not be stored: \(error)",
                        timestampMillis: clock.nowMillis(),
                        answerID: turn.eventID
                    )
                )
            case .failure(let error):
                turn.isFinishing = false
                end(turn, .failed, reason: "the answer could not be stored: \(error)")
            }
        }
        if !turn.isAside { claimAhead(turn.conversationID) }
    }

    /// Ends an active turn without an answer: records why, tells every device, moves on.
    func end(_ turn: Turn, _ cause: TurnFailure.Cause, reason: String) {
        guard isActive(turn), !turn.isFinishing else { return }
        lanes[turn.conversationID]?.active = nil
        released(turn)
        if let timer = turn.inactivityTimer { loop.cancel(timer) }
        approvals.cancel(runID: turn.ref.runID)
        turn.handle?.cancel()
        failedCount += 1
        logger.warning(
            "turn ended without an answer",
            metadata: [
                "conversation": "\(turn.conversationID)", "run": "\(turn.ref.runID)", "device": "\(turn.ref.deviceID)", "cause": "\(cause.rawValue)",
                "reason": "\(reason)",
            ]
        )
        record(
            TurnFailure(
                turn: turn.ref,
                conversationID: turn.conversationID,
                userID: turn.userID,
                cause: cause,
                reason: reason,
                timestampMillis: clock.nowMillis(),
                answerID: turn.eventID
            )
        ) { [weak self] in self?.runNext(turn.conversationID) }
        claimAhead(turn.conversationID)
        bus.publish(.assistantTyping(conversationID: turn.conversationID, active: false), to: turn.userID)
    }

    /// Stores how a turn ended without an answer, then tells every device (so a client that reads
    /// the history on hearing it finds it there) and whoever waits for the run; `then` runs after.
    private func record(_ failure: TurnFailure, then: (() -> Void)? = nil) {
        let targets = queue.targets(userID: failure.userID, conversationID: failure.conversationID)
        journal.fail(failure, queue: targets) { [weak self, logger] result in
            if case .failure(let error) = result {
                logger.error("could not record a failed turn", metadata: ["run": "\(failure.turn.runID)", "error": "\(error)"])
            }
            guard let self else { return }
            if case .failure(let error) = result, error is TurnFenced {
                // Not this node's any more: whoever took it over told every device.
                ended(failure.turn.runID, .failed(failure))
                then?()
                return
            }
            let seq = try? result.get()
            queue.publish(.turnFailed(failure), userID: failure.userID, queuedFor: targets, seqs: seq.map { $0...$0 })
            ended(failure.turn.runID, .failed(failure))
            then?()
        }
    }

    /// Aborts a conversation's turns (or the one with `runID`), active and queued; returns their run
    /// ids. In a cluster the other nodes are asked to abort theirs too (their run ids are not known here).
    @discardableResult
    public func abort(conversationID: String, runID: String? = nil, reason: String = "aborted") -> [String] {
        cluster?.fabric.send(.abort(conversationID: conversationID, runID: runID, reason: reason))
        return abortHere(conversationID: conversationID, runID: runID, reason: reason)
    }

    /// `abort` on this node only.
    @discardableResult
    func abortHere(conversationID: String, runID: String? = nil, reason: String) -> [String] {
        guard let lane = lanes[conversationID] else { return [] }
        var aborted: [String] = []
        let queued = lane.queue.filter { runID == nil || $0.ref.runID == runID }
        lane.queue.removeAll { runID == nil || $0.ref.runID == runID }
        if let active = lane.active, runID == nil || active.ref.runID == runID, !active.isFinishing {
            aborted.append(active.ref.runID)
            end(active, .aborted, reason: reason)
        }
        for turn in queued {
            aborted.append(turn.ref.runID)
            record(
                TurnFailure(
                    turn: turn.ref,
                    conversationID: conversationID,
                    userID: turn.userID,
                    cause: .aborted,
                    reason: reason,
                    timestampMillis: clock.nowMillis(),
                    answerID: turn.eventID
                )
            )
        }
        dropIfIdle(conversationID)
        return aborted
    }

    /// Aborts every turn, active and queued (the relay is stopping): each asker hears its
    /// protocol's failure before its socket closes. Returns how many turns ended.
    @discardableResult
    public func abortAll(reason: String) -> Int {
        lanes.keys.sorted().reduce(0) { count, conversationID in count + abortHere(conversationID: conversationID, reason: reason).count }
    }

    /// The device went away and its protocol cancels on disconnect: its running turn fails, its
    /// queued turns are dropped (their messages stay unanswered, so a retry with the same id runs
    /// them), and messages it still has in flight do not start turns.
    public func abandon(deviceID: String) {
        abandonments[deviceID, default: 0] += 1
        for (conversationID, lane) in lanes {
            for dropped in lane.queue where dropped.ref.deviceID == deviceID {
                let failure = TurnFailure(
                    turn: dropped.ref,
                    conversationID: conversationID,
                    userID: dropped.userID,
                    cause: .abandoned,
                    reason: "its device disconnected",
                    timestampMillis: clock.nowMillis(),
                    answerID: dropped.eventID
                )
                ended(dropped.ref.runID, .failed(failure))
                cluster?.ledger.withdraw(runID: dropped.ref.runID)
            }
            lane.queue.removeAll { $0.ref.deviceID == deviceID }
            if let active = lane.active, active.ref.deviceID == deviceID {
                end(active, .abandoned, reason: "its device disconnected")
            }
            dropIfIdle(conversationID)
        }
    }
}
